/// A value that writes itself as JSON: a string, a number, a Bool, nil of one of them (`null`),
/// or a row type that says how it encodes (its members, in its order).
///
/// A row type conforms once, and every place that lists such rows writes them with
/// ``JSONWriter/array(_:)``: the row's key order and member names live in one place.
public protocol JSONWritable {
    /// Appends the value's JSON to `json`.
    func appendJSON(to json: inout JSONWriter)
}

// The values: strings, numbers and Bools, each as the writer writes it.

extension String: JSONWritable {
    @inlinable public func appendJSON(to json: inout JSONWriter) { json.string(self) }
}

extension Double: JSONWritable {
    @inlinable public func appendJSON(to json: inout JSONWriter) { json.number(self) }
}

extension Bool: JSONWritable {
    @inlinable public func appendJSON(to json: inout JSONWriter) { json.bool(self) }
}

extension JSONWritable where Self: BinaryInteger {
    /// Appends the number in decimal.
    @inlinable public func appendJSON(to json: inout JSONWriter) { json.integer(self) }
}

extension Int: JSONWritable {}
extension Int64: JSONWritable {}
extension UInt64: JSONWritable {}

extension Optional: JSONWritable where Wrapped: JSONWritable {
    /// Appends the value, or `null` when there is none.
    @inlinable
    public func appendJSON(to json: inout JSONWriter) {
        if let self { self.appendJSON(to: &json) } else { json.null() }
    }
}

extension JSONWriter {
    /// Appends the members `"name":value`, in order and separated by commas, with a comma before
    /// the first unless it is the object's `first`: the flat part of an object whose other
    /// members are written around it. The names are escaped as strings are (names are `String`,
    /// not `StaticString`, so that a literal name is never mistaken for another type).
    @inlinable
    public mutating func members<each Value: JSONWritable>(first: Bool = false, _ members: repeat (String, each Value)) {
        var first = first
        for (name, value) in repeat each members {
            key(escaping: name, first: first)
            first = false
            value.appendJSON(to: &self)
        }
    }

    /// Appends an object of these members in this order: `{"name":value,…}`.
    @inlinable
    public mutating func object<each Value: JSONWritable>(_ members: repeat (String, each Value)) {
        bytes.append(UInt8(ascii: "{"))
        self.members(first: true, repeat each members)
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `items` as an array, each as it writes itself.
    @inlinable
    public mutating func array<Items: Sequence>(_ items: Items) where Items.Element: JSONWritable {
        array(items) { json, item in item.appendJSON(to: &json) }
    }
}
