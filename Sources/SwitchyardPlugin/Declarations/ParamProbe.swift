import SwitchyardProtocol

/// Reads the params a `Codable` route input declares, without an instance: the input type decodes itself from a
/// decoder that hands out placeholder values and writes down every key asked for, with its type and whether it was
/// optional. Synthesized `Codable` asks for every stored property, in order, so
/// `struct Search: Codable { var text: String; var limit: Int? }` declares `text` (string, required) and `limit`
/// (integer, optional) in the route table, and the host validates them before the plugin is asked.
///
/// A type whose `init(from:)` rejects the placeholders (an enum with no raw value `""`, say) cannot be probed; its
/// route declares no params and the plugin validates alone (`params:` on the route declares them by hand).
enum ParamProbe {
    static func declarations<T: Decodable>(of type: T.Type) -> [ParamDeclaration]? {
        let recorder = Recorder()
        guard (try? T(from: ProbeDecoder(recorder: recorder, depth: 0))) != nil, !recorder.params.isEmpty else {
            return nil
        }
        return recorder.params
    }

    /// How a type decodes itself at the top: from an object (a struct's keys), one value or an array.
    enum Shape { case keyed, single, unkeyed }

    /// How `type` asks to be decoded, or nil when it asks for nothing: a route's params travel as one JSON object,
    /// so only a keyed type (or a ``RouteParameter``, sent as one named param) can be a factory's input.
    static func shape<T: Decodable>(of type: T.Type) -> Shape? {
        let recorder = Recorder()
        // Whether the placeholders then fit does not matter: the first container asked for says the shape.
        _ = try? T(from: ProbeDecoder(recorder: recorder, depth: 0))
        return recorder.shape
    }

    final class Recorder {
        var params: [ParamDeclaration] = []
        /// The first container the probed type asked for.
        var shape: Shape?
        func record(_ key: any CodingKey, _ type: ParamType, required: Bool) {
            guard !params.contains(where: { $0.name == key.stringValue }) else { return }
            params.append(ParamDeclaration(name: key.stringValue, type: type, required: required ? nil : false))
        }
    }

    static func paramType<T>(of type: T.Type) -> ParamType {
        if let scalar = type as? any RouteParameter.Type { return scalar.paramType }
        switch type {
        case is String.Type, is Character.Type: return .string
        case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
            is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type:
            return .integer
        case is Double.Type, is Float.Type: return .number
        case is Bool.Type: return .boolean
        case is JSONValue.Type: return .any
        default: return String(describing: type).hasPrefix("Array<") ? .array : .object
        }
    }

    /// Placeholder values: empty strings, zeros, false, empty arrays, nested objects probed the same way.
    struct ProbeDecoder: Decoder {
        let recorder: Recorder?
        let depth: Int
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            noteShape(.keyed)
            return KeyedDecodingContainer(KeyedProbe<Key>(recorder: depth == 0 ? recorder : nil, depth: depth))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            noteShape(.unkeyed)
            return EmptyUnkeyed()
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            noteShape(.single)
            return SingleProbe(depth: depth)
        }

        private func noteShape(_ shape: Shape) {
            if depth == 0, let recorder, recorder.shape == nil { recorder.shape = shape }
        }
    }

    static func placeholder<T: Decodable>(_ type: T.Type, depth: Int) throws -> T {
        if let primitive = type as? any ProbePlaceholder.Type, let value = primitive.probeValue as? T { return value }
        if let value = JSONValue.null as? T { return value }
        guard depth < 16 else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "too deep to probe"))
        }
        return try T(from: ProbeDecoder(recorder: nil, depth: depth + 1))
    }

    struct KeyedProbe<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let recorder: Recorder?
        let depth: Int
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            recorder?.record(key, ParamProbe.paramType(of: type), required: true)
            return try ParamProbe.placeholder(type, depth: depth)
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            recorder?.record(key, ParamProbe.paramType(of: type), required: false)
            return nil
        }

        // The concrete overloads synthesized code calls; each forwards to the generic one.
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(type as Bool.Type, key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(type as String.Type, key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(type as Double.Type, key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(type as Float.Type, key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(type as Int.Type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(type as Int8.Type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(type as Int16.Type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(type as Int32.Type, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(type as Int64.Type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(type as UInt.Type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(type as UInt8.Type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(type as UInt16.Type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(type as UInt32.Type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(type as UInt64.Type, key) }

        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { optional(type, key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { optional(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { optional(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { optional(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { optional(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { optional(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { optional(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { optional(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { optional(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { optional(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { optional(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { optional(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { optional(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { optional(type, key) }

        private func decode<T: Decodable & ProbePlaceholder>(_ type: T.Type, _ key: Key) throws -> T {
            recorder?.record(key, ParamProbe.paramType(of: type), required: true)
            return T.probeValue
        }

        private func optional<T>(_ type: T.Type, _ key: Key) -> T? {
            recorder?.record(key, ParamProbe.paramType(of: type), required: false)
            return nil
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            recorder?.record(key, .object, required: true)
            return KeyedDecodingContainer(KeyedProbe<NestedKey>(recorder: nil, depth: depth + 1))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            recorder?.record(key, .array, required: true)
            return EmptyUnkeyed()
        }

        func superDecoder() throws -> any Decoder { ProbeDecoder(recorder: nil, depth: depth + 1) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(recorder: nil, depth: depth + 1) }
    }

    /// An empty array.
    struct EmptyUnkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "empty"))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: [], debugDescription: "empty"))
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { self }
        mutating func superDecoder() throws -> any Decoder { ProbeDecoder(recorder: nil, depth: 16) }
    }

    /// A single value: a placeholder of the asked type.
    struct SingleProbe: SingleValueDecodingContainer {
        let depth: Int
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try ParamProbe.placeholder(type, depth: depth) }
    }
}

/// The primitives a keyed container decodes directly, with the placeholder each decodes to.
protocol ProbePlaceholder {
    static var probeValue: Self { get }
}

extension Bool: ProbePlaceholder { static var probeValue: Bool { false } }
extension String: ProbePlaceholder { static var probeValue: String { "" } }
extension Double: ProbePlaceholder { static var probeValue: Double { 0 } }
extension Float: ProbePlaceholder { static var probeValue: Float { 0 } }
extension Int: ProbePlaceholder { static var probeValue: Int { 0 } }
extension Int8: ProbePlaceholder { static var probeValue: Int8 { 0 } }
extension Int16: ProbePlaceholder { static var probeValue: Int16 { 0 } }
extension Int32: ProbePlaceholder { static var probeValue: Int32 { 0 } }
extension Int64: ProbePlaceholder { static var probeValue: Int64 { 0 } }
extension UInt: ProbePlaceholder { static var probeValue: UInt { 0 } }
extension UInt8: ProbePlaceholder { static var probeValue: UInt8 { 0 } }
extension UInt16: ProbePlaceholder { static var probeValue: UInt16 { 0 } }
extension UInt32: ProbePlaceholder { static var probeValue: UInt32 { 0 } }
extension UInt64: ProbePlaceholder { static var probeValue: UInt64 { 0 } }
