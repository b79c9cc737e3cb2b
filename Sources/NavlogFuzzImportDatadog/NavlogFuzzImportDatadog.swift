// libFuzzer target for `navlog import --from datadog` (NavlogImport's Datadog converter): each input
// checked by NavlogTesting's ImportFuzzCheck (what it checks is said there). Build and run it with
// tools/fuzz; built without `--sanitize=fuzzer` it is a program that does nothing.
//
// No top-level code and no global variables: libFuzzer's `main` runs instead of this file's.
import NavlogImport
import NavlogTesting

/// libFuzzer's entry point: one input, never kept after the call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    ImportFuzzCheck.run(.datadog, UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count))
    return 0
}
