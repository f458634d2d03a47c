/// A JSON-RPC request id: a number or a string. The host numbers its own requests per connection, from 1.
public enum RequestID: Hashable, Sendable, Codable, CustomStringConvertible {
    case number(Int64)
    case string(String)

    public var description: String {
        switch self {
        case .number(let value): String(value)
        case .string(let value): "\"\(value)\""
        }
    }

    public var json: JSONValue {
        switch self {
        case .number(let value): .int(value)
        case .string(let value): .string(value)
        }
    }

    /// Reads an id; only integers and strings are ids (JSON-RPC discourages fractions and null).
    public init?(json: JSONValue) {
        switch json {
        case .int(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .double(let value):
            guard let exact = Int64(exactly: value) else { return nil }
            self = .number(exact)
        default: return nil
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        }
    }
}
