// Writes JSON text straight into a byte array: no Foundation, no intermediate `String`s.

/// A growable byte buffer with the few JSON writers the generator needs.
struct JSONBytes {
    /// The bytes written so far.
    var bytes: [UInt8] = []

    /// The number of bytes written.
    var count: Int { bytes.count }

    /// Forgets the contents, keeping the capacity.
    mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    /// Appends one byte.
    @inline(__always)
    mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// Appends text that needs no escaping (keys, punctuation, enum values).
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes as they are.
    @inline(__always)
    mutating func raw(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    /// Appends `,"key":`.
    @inline(__always)
    mutating func key(_ name: StaticString) {
        bytes.append(UInt8(ascii: ","))
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends a JSON string literal for `text`, escaped per RFC 8259.
    @inline(__always)
    mutating func string(_ text: StaticString) {
        text.withUTF8Buffer { string(utf8: $0) }
    }

    /// Appends a JSON string literal for the UTF-8 bytes `utf8`, escaped per RFC 8259.
    mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        var index = 0
        let n = utf8.count
        while index < n {
            let b = utf8[index]
            if b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                escape(b)
                start = index + 1
            }
            index += 1
        }
        if start < n { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<n])) }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ b: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch b {
        case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(UInt8(ascii: "u"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(Self.hexDigit(b >> 4))
            bytes.append(Self.hexDigit(b & 0xF))
        }
    }

    /// The lowercase hexadecimal digit for `nibble` (0...15).
    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble }

    /// Appends `true` or `false`.
    @inline(__always)
    mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    /// Appends a non-negative integer in decimal.
    mutating func uint(_ value: UInt64) {
        if value < 10 {
            bytes.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var v = value
            var i = 20
            while v > 0 {
                i -= 1
                buffer[i] = UInt8(truncatingIfNeeded: v % 10) &+ 0x30
                v /= 10
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[i..<20]))
        }
    }

    /// Appends an integer in decimal.
    @inline(__always)
    mutating func int(_ value: Int64) {
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            uint(value.magnitude)
        } else {
            uint(UInt64(value))
        }
    }

    /// Appends `hundredths / 100` with two decimals (`12.30`), for prices and the like.
    mutating func decimal(hundredths: Int) {
        uint(UInt64(hundredths / 100))
        bytes.append(UInt8(ascii: "."))
        let cents = hundredths % 100
        bytes.append(UInt8(truncatingIfNeeded: cents / 10) &+ 0x30)
        bytes.append(UInt8(truncatingIfNeeded: cents % 10) &+ 0x30)
    }

    /// Appends `tenths / 10` with one decimal (`42.5`).
    mutating func decimal(tenths: Int) {
        uint(UInt64(tenths / 10))
        bytes.append(UInt8(ascii: "."))
        bytes.append(UInt8(truncatingIfNeeded: tenths % 10) &+ 0x30)
    }

    /// Appends `"0x…"`: a pointer-like id in lowercase hexadecimal, quoted.
    mutating func pointer(_ address: UInt64) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: "x"))
        var shift = 60
        while shift > 0 && (address >> UInt64(shift)) == 0 { shift -= 4 }
        while shift >= 0 {
            bytes.append(Self.hexDigit(UInt8(truncatingIfNeeded: (address >> UInt64(shift)) & 0xF)))
            shift -= 4
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
