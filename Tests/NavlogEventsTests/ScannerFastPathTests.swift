import Testing

@testable import NavlogEvents

/// The parser's word-at-a-time shortcuts must give exactly what a byte-by-byte reading gives:
/// a key, type or enum value that is looked up wrongly, or a string that ends one byte early,
/// would store a different event than the client sent.
@Suite("The parser's fast paths agree with byte-by-byte reading")
struct ScannerFastPathTests {
    /// Every vocabulary name is found, at every length, and near misses are not.
    @Test("names are found by their 16-byte words, and near misses are not")
    func nameLookup() {
        func expected(_ bytes: [UInt8]) -> UInt8? { FieldName.allCases.first { Array($0.name.utf8) == bytes }?.rawValue }
        for field in FieldName.allCases {
            let name = Array(field.name.utf8)
            #expect(lookup(fieldTable, name) == field.rawValue, "\(field.name)")
            // Each byte changed, one byte more, one byte less: found only if that is a field too.
            for index in name.indices {
                var changed = name
                changed[index] ^= 0x01
                #expect(lookup(fieldTable, changed) == expected(changed), "\(changed)")
            }
            #expect(lookup(fieldTable, name + [0x78]) == expected(name + [0x78]))
            #expect(lookup(fieldTable, Array(name.dropLast())) == expected(Array(name.dropLast())))
        }
        for type in EventType.allCases {
            #expect(Array(type.name.utf8).withUnsafeBytes { EventType.lookup($0) } == type, "\(type.name)")
        }
        // Names over 16 bytes compare their rest: same first 16 bytes, different end.
        let table = NameTable([("supplementaryViewController", 1), ("supplementaryViewControllerX", 2), ("abc", 3), ("", 4)])
        #expect(lookup(table, "supplementaryViewController") == 1)
        #expect(lookup(table, "supplementaryViewControllerX") == 2)
        #expect(lookup(table, "supplementaryViewControllerY") == nil)
        #expect(lookup(table, "supplementaryViewContrXller") == nil)
        #expect(lookup(table, "abc") == 3)
        #expect(lookup(table, "") == 4)
        #expect(lookup(table, "ab") == nil)
        #expect(lookup(table, "abc\u{0}") == nil)
    }

    /// Every length from 0 to 40, with the stopping byte at every place, inside a longer buffer
    /// (so a word read would see bytes past the end if it read too far).
    @Test("the eight-byte string scan stops at the first quote, backslash or control byte")
    func plainRunEnd() {
        var generator = SystemRandomNumberGenerator()
        let stoppers: [UInt8] = [0x22, 0x5C, 0x00, 0x1F, 0x0A]
        let fillers: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xC3, 0xFF, 0x41, 0x7E]
        for length in 0...40 {
            for stopAt in 0...length {
                var bytes = (0..<(length + 16)).map { _ in fillers.randomElement(using: &generator)! }
                if stopAt < length { bytes[stopAt] = stoppers.randomElement(using: &generator)! }
                // Past `length` (outside the scanned range) put a stopper the scan must not see.
                bytes[length] = 0x22
                let found = bytes.withUnsafeBufferPointer { JSONStringScan.endOfPlainRun($0.baseAddress!, from: 0, to: length) }
                let expected = bytes[0..<length].firstIndex { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } ?? length
                #expect(found == expected, "length \(length), stop at \(stopAt), bytes \(bytes[0..<length])")
            }
        }
    }

    private func lookup(_ table: NameTable, _ name: String) -> UInt8? {
        lookup(table, Array(name.utf8))
    }

    private func lookup(_ table: NameTable, _ bytes: [UInt8]) -> UInt8? {
        // The bytes after the name in a larger buffer must not change the answer.
        let exact = bytes.withUnsafeBytes { table.lookup($0) }
        let padded = (bytes + [0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x6B, 0x6C, 0x6D, 0x6E, 0x6F, 0x70])
        let inside = padded.withUnsafeBytes { table.lookup(UnsafeRawBufferPointer(rebasing: $0[0..<bytes.count])) }
        #expect(exact == inside, "\(bytes)")
        return exact
    }
}
