// libFuzzer target for the event-line codec (`EventLineParser`), the one codec every input
// path uses. Build and run it with tools/fuzz; built without `--sanitize=fuzzer` it is a
// program that does nothing.
//
// Each input is tried three ways:
// 1. as one line, twice with the same parser (its reused scratch buffers must not change the
//    answer); a rejection must say where and why;
// 2. an accepted event goes through the block codec and back out as JSON (what `navlog cat`
//    prints), which must parse again and print the same (cat's output can be ingested again);
// 3. as a stream: split by `LineFramer` (a small line limit, chunks cut where the input says),
//    each line parsed.
//
// No top-level code and no global variables here: libFuzzer's `main` runs instead of this
// file's, so top-level initializers would never run. State lives in static properties.
import NavlogEvents
import NavlogStore

#if canImport(Glibc)
    import Glibc
#endif

/// libFuzzer's entry point: one input, never kept after the call.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    EventLineFuzz.run(UnsafeRawBufferPointer(start: count > 0 ? start : nil, count: count))
    return 0
}

enum EventLineFuzz {
    static let peer = PeerCredentials(uid: 501, gid: 20, pid: 4242)
    static let receivedAt: Int64 = 1_763_712_000_000_000

    static func run(_ input: UnsafeRawBufferPointer) {
        var parser = EventLineParser()
        var batch = EventBatch()
        let first = parse(&parser, input, lineNumber: 7, into: &batch)
        var again = EventBatch()
        let second = parse(&parser, input, lineNumber: 7, into: &again)
        guard first == second else { fatalError("the same line parsed twice gave \(first) then \(second)") }
        if case .failure(let rejection) = first {
            guard rejection.line == 7, !rejection.reason.isEmpty else { fatalError("a rejection without a place or a reason: \(rejection)") }
            if let column = rejection.column, column < 1 || column > input.count + 1 { fatalError("a rejection's column is outside the line: \(rejection)") }
            _ = rejection.description
        }
        if case .success(.event) = first {
            guard batch.count == 1 else { fatalError("an accepted line appended \(batch.count) events") }
            roundTrip(batch)
        } else if !batch.isEmpty {
            fatalError("a line that is not an event appended \(batch.count) events (\(first))")
        }
        framed(input)
    }

    static func parse(
        _ parser: inout EventLineParser, _ line: UnsafeRawBufferPointer, lineNumber: Int, into batch: inout EventBatch
    ) -> Result<
        EventLineParser.Line, EventRejection
    > {
        do throws(EventRejection) {
            return .success(try parser.parse(line, lineNumber: lineNumber, receivedAt: receivedAt, peer: peer, into: &batch))
        } catch {
            return .failure(error)
        }
    }

    /// The accepted event, stored and printed the way `navlog cat` prints it, must parse again
    /// and print the same.
    static func roundTrip(_ batch: EventBatch) {
        let printed = printLine(batch)
        var parser = EventLineParser(maximumLineLength: 1 << 22)
        var reparsed = EventBatch()
        let outcome = printed.withUnsafeBytes { parse(&parser, $0, lineNumber: 1, into: &reparsed) }
        guard case .success(.event) = outcome else {
            fatalError("navlog cat's line for an accepted event does not parse again (\(outcome)): \(String(decoding: printed, as: UTF8.self))")
        }
        let reprinted = printLine(reparsed)
        guard reprinted == printed else {
            fatalError("an event printed, parsed and printed again changed:\n\(String(decoding: printed, as: UTF8.self))\n\(String(decoding: reprinted, as: UTF8.self))")
        }
    }

    static func printLine(_ batch: EventBatch) -> [UInt8] {
        var codec = InMemoryBlockCodec()
        var block = DecodedBlock()
        do {
            try codec.roundTrip(batch, firstLSN: 1, into: &block)
        } catch {
            fatalError("the block codec could not decode what it encoded: \(error)")
        }
        var output: [UInt8] = []
        do {
            try block.appendJSONLine(0, to: &output)
        } catch {
            fatalError("an accepted event's stored body does not print (offset \(error.offset))")
        }
        guard output.last == 0x0A else { fatalError("a printed event does not end its line") }
        output.removeLast()
        return output
    }

    /// The input as a byte stream: lines framed with a 256-byte limit, in two chunks cut at a
    /// place the input's first byte chooses, each line parsed with one reused parser.
    static func framed(_ input: UnsafeRawBufferPointer) {
        let cut = input.isEmpty ? 0 : Int(input[0]) % (input.count + 1)
        var framer = LineFramer(maximumLineLength: 256)
        var parser = EventLineParser(maximumLineLength: 256)
        var batch = EventBatch()
        var lines = 0
        let deliver = { (number: Int, piece: LineFramer.Piece) in
            lines += 1
            guard number == lines else { fatalError("the framer numbered line \(lines) as \(number)") }
            switch piece {
            case .line(let line):
                guard line.count <= 257 else { fatalError("the framer delivered a \(line.count)-byte line past its limit") }
                _ = parse(&parser, line, lineNumber: number, into: &batch)
            case .tooLong(let length):
                guard length > 256 else { fatalError("the framer called a \(length)-byte line too long") }
                _ = parser.tooLong(lineNumber: number, length: length).description
            }
        }
        framer.feed(UnsafeRawBufferPointer(rebasing: input[0..<cut]), deliver)
        framer.feed(UnsafeRawBufferPointer(rebasing: input[cut...]), deliver)
        framer.finish(deliver)
        let newlines = input.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        let expected = newlines + (input.last.map { $0 == 0x0A ? 0 : 1 } ?? 0)
        guard lines == expected else { fatalError("the framer delivered \(lines) lines for \(newlines) newlines in \(input.count) bytes") }
    }
}
