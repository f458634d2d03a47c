/// Typed encoding and decoding of `params` and `result` values: the general path between a message's Codable
/// type and the parsed tree (``JSONValue``). Every message without a byte path goes this way, and every byte path
/// falls back to it for anything outside its shape, so errors name the field the same way whichever path ran
/// (JSON/README.md lists the paths).
public enum Coding {
    public static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue?) throws -> T {
        try JSONValueDecoder().decode(type, from: value ?? .object(JSONObject()))
    }

    public static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONValueEncoder().encode(value)
    }
}
