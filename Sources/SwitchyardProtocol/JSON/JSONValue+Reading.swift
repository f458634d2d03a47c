// The readers' vocabulary: a value read straight from a parsed tree as a `Decodable` conformance reads it, or nil
// for anything that conformance would reject (the caller then decodes with Codable, which names what is wrong).

extension JSONValue {
    /// An optional string member as Codable reads it: `.some(nil)` when absent or null, nil when not a string.
    static func optionalString(_ member: JSONValue?) -> String?? {
        switch member {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        default: return nil
        }
    }
}
