/// A type that writes its own compact JSON, byte for byte what its `Encodable` conformance produces.
///
/// Why: snapshots are the largest thing the host writes (`tree/get`, `tree/changed`, the state file). Through
/// Codable a 1,000-instance tree took ~36 ms to encode, almost all of it generic container dispatch; written
/// directly it is a few ms. `JSONStreamEncoderTests` pins every conformance to its Codable output.
public protocol JSONWritable {
    func write(to writer: inout JSONWriter)
}

// The vocabulary every writer shares: how Codable's synthesized `encode(to:)` lays out members (in declaration
// order, an absent optional omitted, never `null`), so a writer reads like the struct it writes.
extension JSONWriter {
    /// A member name known not to need escaping.
    mutating func key(_ name: String, first: inout Bool) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        append(UInt8(ascii: "\""))
        writeRaw(name)
        append(UInt8(ascii: "\""))
        append(UInt8(ascii: ":"))
    }

    /// `"name":value` (after a comma unless first), or nothing for nil: how Codable writes an optional member.
    mutating func member(_ name: String, _ value: JSONValue?, first: inout Bool) {
        guard let value else { return }
        key(name, first: &first)
        write(value)
    }

    mutating func member(_ name: String, _ value: String?, first: inout Bool) {
        guard let value else { return }
        key(name, first: &first)
        writeString(value)
    }

    mutating func member(_ name: String, _ value: (some JSONWritable)?, first: inout Bool) {
        guard let value else { return }
        key(name, first: &first)
        value.write(to: &self)
    }

    mutating func member(_ name: String, _ values: [some JSONWritable]?, first: inout Bool) {
        guard let values else { return }
        key(name, first: &first)
        append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            value.write(to: &self)
        }
        append(UInt8(ascii: "]"))
    }

    /// `{"instance":N`: how the params of the per-instance requests and notifications begin.
    mutating func openInstance(_ instance: InstanceID) {
        writeRaw("{\"instance\":")
        writeInteger(instance.rawValue)
    }

    /// A member after the first, its name and colon given (`,"type":`), with a string value.
    mutating func field(_ prefix: String, _ text: String) {
        writeRaw(prefix)
        writeString(text)
    }

    /// A member after the first, its name and colon given, with an integer value.
    mutating func field(_ prefix: String, _ number: Int64) {
        writeRaw(prefix)
        writeInteger(number)
    }
}
