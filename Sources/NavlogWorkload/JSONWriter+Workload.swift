import NavlogJSON

// The generator's own number and id shapes, on the one JSON writer.
extension JSONWriter {
    /// Appends `hundredths / 100` with two decimals (`12.30`), for prices and the like.
    mutating func decimal(hundredths: Int) {
        integer(hundredths / 100)
        byte(UInt8(ascii: "."))
        let cents = hundredths % 100
        byte(UInt8(truncatingIfNeeded: cents / 10) &+ 0x30)
        byte(UInt8(truncatingIfNeeded: cents % 10) &+ 0x30)
    }

    /// Appends `tenths / 10` with one decimal (`42.5`).
    mutating func decimal(tenths: Int) {
        integer(tenths / 10)
        byte(UInt8(ascii: "."))
        byte(UInt8(truncatingIfNeeded: tenths % 10) &+ 0x30)
    }

    /// Appends `"0x…"`: a pointer-like id in lowercase hexadecimal, quoted.
    mutating func pointer(_ address: UInt64) {
        byte(UInt8(ascii: "\""))
        byte(UInt8(ascii: "0"))
        byte(UInt8(ascii: "x"))
        var shift = 60
        while shift > 0 && (address >> UInt64(shift)) == 0 { shift -= 4 }
        while shift >= 0 {
            byte(Self.hexDigit(UInt8(truncatingIfNeeded: (address >> UInt64(shift)) & 0xF)))
            shift -= 4
        }
        byte(UInt8(ascii: "\""))
    }
}
