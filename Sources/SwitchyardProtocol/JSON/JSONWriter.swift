/// Serialises JSON compactly into bytes: one line, no raw newline (strings escape `\n`), keys in insertion order.
public struct JSONWriter {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The compact encoding of `value`.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }

    /// The compact encoding of `value` as a `String`.
    public static func string(_ value: JSONValue) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: writeRaw("null")
        case .bool(let flag): writeRaw(flag ? "true" : "false")
        case .int(let number): writeInteger(number)
        case .double(let number): writeDouble(number)
        case .string(let text): writeString(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                write(member)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends bytes that are already valid JSON text (used for pre-encoded fragments).
    public mutating func writeRaw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func writeRawBytes(_ fragment: [UInt8]) {
        bytes.append(contentsOf: fragment)
    }

    /// Appends a slice that is already valid JSON text (a line read from a pipe), without copying it first.
    public mutating func writeRawBytes(_ fragment: ArraySlice<UInt8>) {
        bytes.append(contentsOf: fragment)
    }

    public mutating func append(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Empties the writer for reuse, keeping its storage: a writer that buffers output between writes (the plugin
    /// SDK's stdout) allocates once, not once per batch.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    public mutating func writeInteger(_ number: Int64) {
        if number >= 0 && number < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(number))
            return
        }
        // Digits straight into the buffer: every request id passes here, and `String(number)` allocated for each.
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var divisor: UInt64 = 1
        while divisor <= magnitude / 10 { divisor &*= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }

    public mutating func writeDouble(_ number: Double) {
        guard number.isFinite else {
            // JSON has no NaN or infinity; null is what JavaScript's JSON.stringify writes.
            writeRaw("null")
            return
        }
        if let exact = Int64(exactly: number), abs(number) < 1e15 {
            writeInteger(exact)
            return
        }
        // Swift prints the shortest representation that round-trips, e.g. "0.1", "1e-05", "1.5e+300".
        bytes.append(contentsOf: number.description.utf8)
    }

    public mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // Keys, methods and most values need no escape: copied in one piece (a byte at a time cost ~40 instructions
        // per byte, the bulk of encoding a request).
        if !Self.needsEscape(text.utf8.span) {
            bytes.append(contentsOf: text.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(UInt8(ascii: "\\"))
            case 0x0A:
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(UInt8(ascii: "n"))
            case 0x0D:
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(UInt8(ascii: "r"))
            case 0x09:
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hexDigit(byte >> 4))
                bytes.append(Self.hexDigit(byte & 0xF))
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether any byte must be escaped (a span: iterating a `String.UTF8View` costs several times more).
    static func needsEscape(_ utf8: Span<UInt8>) -> Bool {
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            index += 1
        }
        return false
    }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { JSONWriter.string(self) }
}
