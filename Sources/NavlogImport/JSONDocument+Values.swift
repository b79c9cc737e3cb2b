#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension JSONDocument {
    /// The value of `key` in the object `node`, or `nil` (also when `node` is no object).
    ///
    /// The converters look up a handful of fixed keys per record, so the key is a
    /// `StaticString`: its bytes are compared in place, with no string made or retained
    /// (``member(_:named:)`` takes a key known only at run time).
    @inline(__always)
    public func member(_ node: Node, _ key: StaticString) -> Node? {
        member(node, utf8: UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
    }

    /// ``member(_:_:)`` for a key known only at run time.
    public func member(_ node: Node, named key: String) -> Node? {
        var key = key
        return key.withUTF8 { member(node, utf8: UnsafeRawBufferPointer($0)) }
    }

    /// The value of the key whose UTF-8 is `wanted` in the object `node`: a walk over the
    /// object's keys, comparing lengths first and bytes only when they agree.
    private func member(_ node: Node, utf8 wanted: UnsafeRawBufferPointer) -> Node? {
        entries.withUnsafeBufferPointer { entries in
            let entry = entries[Int(node.index)]
            guard entry.kind == .object else { return nil }
            var child = Int(node.index) + 1
            let end = Int(entry.next)
            return bytes.withUnsafeBytes { bytes in
                while child < end {
                    let keyEntry = entries[child]
                    if keyEntry.escaped {
                        if decodeString(keyEntry).utf8.elementsEqual(wanted) { return Node(index: Int32(child + 1)) }
                    } else if Int(keyEntry.end - keyEntry.start) == wanted.count,
                        wanted.isEmpty || memcmp(bytes.baseAddress! + Int(keyEntry.start), wanted.baseAddress!, wanted.count) == 0
                    {
                        return Node(index: Int32(child + 1))
                    }
                    child = Int(entries[child + 1].next)
                }
                return nil
            }
        }
    }

    /// The value of `second` in the object that is the value of `first` in `node`, or `nil`
    /// (no array is made for the path, unlike ``member(_:path:)``).
    public func member(_ node: Node, _ first: StaticString, _ second: StaticString) -> Node? {
        member(node, first).flatMap { member($0, second) }
    }

    /// The value three keys down from `node`, or `nil`.
    public func member(_ node: Node, _ first: StaticString, _ second: StaticString, _ third: StaticString) -> Node? {
        member(node, first).flatMap { member($0, second) }.flatMap { member($0, third) }
    }

    /// The value at a path of object keys (`["_dd", "document_version"]` is two keys), or `nil`.
    public func member(_ node: Node, path: [String]) -> Node? {
        var current = node
        for key in path {
            guard let next = member(current, named: key) else { return nil }
            current = next
        }
        return current
    }

    /// The members of the object `node` as (key, value) pairs, in document order.
    public func members(_ node: Node) -> [(key: String, value: Node)] {
        let entry = entries[Int(node.index)]
        guard entry.kind == .object else { return [] }
        var result: [(key: String, value: Node)] = []
        var child = node.index + 1
        while child < entry.next {
            result.append((decodeString(entries[Int(child)]), Node(index: child + 1)))
            child = entries[Int(child + 1)].next
        }
        return result
    }

    /// The elements of the array `node`, in order (empty when it is no array).
    public func elements(_ node: Node) -> [Node] {
        let entry = entries[Int(node.index)]
        guard entry.kind == .array else { return [] }
        var result: [Node] = []
        var child = node.index + 1
        while child < entry.next {
            result.append(Node(index: child))
            child = entries[Int(child)].next
        }
        return result
    }

    /// The text of a string node, escapes decoded; `nil` for any other kind.
    public func string(_ node: Node) -> String? {
        let entry = entries[Int(node.index)]
        guard entry.kind == .string else { return nil }
        return decodeString(entry)
    }

    /// Whether the string node `node` is exactly `text` (no allocation for unescaped strings).
    public func stringEquals(_ node: Node, _ text: StaticString) -> Bool {
        let entry = entries[Int(node.index)]
        guard entry.kind == .string else { return false }
        if entry.escaped { return decodeString(entry).utf8.elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)) }
        let count = Int(entry.end - entry.start)
        guard count == text.utf8CodeUnitCount else { return false }
        let start = Int(entry.start)
        for offset in 0..<count where bytes[start + offset] != text.utf8Start[offset] { return false }
        return true
    }

    /// The raw text of a number node (as written), or `nil` for any other kind.
    public func numberText(_ node: Node) -> String? {
        let entry = entries[Int(node.index)]
        guard entry.kind == .number else { return nil }
        return String(decoding: bytes[Int(entry.start)..<Int(entry.end)], as: UTF8.self)
    }

    /// The value of a number node as a `Double`, or `nil` for any other kind.
    public func number(_ node: Node) -> Double? {
        // Both conversions round the same exact value to the nearest Double.
        if let integer = integer(node) { return Double(integer) }
        if let decimal = shortDecimal(node) { return decimal }
        return numberText(node).flatMap { Double($0) }
    }

    /// The powers of ten a `Double` holds exactly.
    private static let exactPowersOfTen: [Double] = (0...22).map { exponent in (0..<exponent).reduce(1.0) { value, _ in value * 10 } }

    /// The value of a number node written as digits, a point and digits (no exponent), with at
    /// most 15 significant digits, read from its bytes; `nil` for any other node. Such a number
    /// is an integer below 2⁵³ divided by a power of ten a `Double` holds exactly, so the one
    /// division rounds to the nearest `Double`, as `Double(text)` does (Clinger's fast path).
    /// Sentry writes its times so (`1714644000.123`).
    func shortDecimal(_ node: Node) -> Double? {
        let entry = entries[Int(node.index)]
        guard entry.kind == .number else { return nil }
        return bytes.withUnsafeBufferPointer { bytes -> Double? in
            var index = Int(entry.start)
            let end = Int(entry.end)
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            var mantissa: Int64 = 0
            var digits = 0
            var fraction = -1
            while index < end {
                let byte = bytes[index]
                if byte == UInt8(ascii: ".") {
                    guard fraction < 0 else { return nil }
                    fraction = 0
                } else {
                    let digit = byte &- 0x30
                    guard digit <= 9 else { return nil }
                    mantissa = mantissa &* 10 &+ Int64(digit)
                    digits += 1
                    if fraction >= 0 { fraction += 1 }
                    guard digits <= 15 else { return nil }
                }
                index += 1
            }
            guard fraction > 0 else { return nil }
            let value = Double(mantissa) / Self.exactPowersOfTen[fraction]
            return negative ? -value : value
        }
    }

    /// The value of a string node whose text is a plain integer (an optional `-` and 1 to 18
    /// digits, no escapes), as BigQuery's JSON writes an INT64; `nil` for any other node.
    public func digitString(_ node: Node) -> Int64? {
        let entry = entries[Int(node.index)]
        guard entry.kind == .string, !entry.escaped else { return nil }
        return Self.plainInteger(bytes, from: Int(entry.start), to: Int(entry.end))
    }

    /// `bytes[start..<end]` read as an optional `-` and 1 to 18 digits, else `nil`.
    private static func plainInteger(_ bytes: [UInt8], from start: Int, to end: Int) -> Int64? {
        bytes.withUnsafeBufferPointer { bytes in
            var index = start
            let negative = index < end && bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            guard index < end, end - index <= 18 else { return nil }
            var magnitude: Int64 = 0
            while index < end {
                let digit = bytes[index] &- 0x30
                guard digit <= 9 else { return nil }
                magnitude = magnitude &* 10 &+ Int64(digit)
                index += 1
            }
            return negative ? -magnitude : magnitude
        }
    }

    /// The value of a number node written as a plain integer (an optional `-` and at most 18
    /// digits, no fraction or exponent), read from its bytes; `nil` for any other node. Most
    /// numbers in the sources' records are such (times, versions, durations), and reading them
    /// makes no string.
    public func integer(_ node: Node) -> Int64? {
        let entry = entries[Int(node.index)]
        guard entry.kind == .number else { return nil }
        return Self.plainInteger(bytes, from: Int(entry.start), to: Int(entry.end))
    }

    /// The value of a boolean node, or `nil` for any other kind.
    public func bool(_ node: Node) -> Bool? {
        let entry = entries[Int(node.index)]
        return entry.kind == .bool ? entry.flag : nil
    }

    /// The text of a string node unless it is empty; `nil` for no node, any other kind, or "":
    /// the sources write an empty string where they have nothing to say.
    func nonEmptyString(_ node: Node?) -> String? {
        guard let node, let text = string(node), !text.isEmpty else { return nil }
        return text
    }

    /// A string, or a number's text, as a string (ids are sometimes written either way).
    public func text(_ node: Node) -> String? {
        string(node) ?? numberText(node)
    }

    /// Decodes a string entry's escapes.
    func decodeString(_ entry: Entry) -> String {
        let range = Int(entry.start)..<Int(entry.end)
        guard entry.escaped else { return String(decoding: bytes[range], as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var index = range.lowerBound
        func scalar(at position: Int) -> UInt32 {
            var value: UInt32 = 0
            for offset in 1...4 { value = value << 4 | (JSONDocument.hexValue(bytes[position + offset]) ?? 0) }
            return value
        }
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                index += 1
                continue
            }
            let kind = bytes[index + 1]
            index += 2
            switch kind {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var value = scalar(at: index - 1)
                index += 4
                if value >= 0xD800, value < 0xDC00, index + 6 <= range.upperBound, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                    let low = scalar(at: index + 1)
                    if low >= 0xDC00, low < 0xE000 {
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                        index += 6
                    }
                }
                // A lone surrogate becomes U+FFFD: what is stored must be valid UTF-8.
                let character = Unicode.Scalar(value) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(character)).utf8))
            default: out.append(kind)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension JSONDocument {
    /// Calls `body` with the UTF-8 of the string node `node` (escapes decoded) and returns what
    /// it returns, or `nil` when `node` is no string. An unescaped string's bytes are passed in
    /// place, with no string made.
    func withStringBytes<R>(_ node: Node, _ body: (UnsafeRawBufferPointer) -> R) -> R? {
        let entry = entries[Int(node.index)]
        guard entry.kind == .string else { return nil }
        guard !entry.escaped else {
            var text = decodeString(entry)
            return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
        return bytes.withUnsafeBytes { bytes in
            body(UnsafeRawBufferPointer(rebasing: bytes[Int(entry.start)..<Int(entry.end)]))
        }
    }
}
