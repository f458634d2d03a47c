/// Decodes `Decodable` types from an already parsed ``JSONValue``: the message is parsed once, strictly, and typed
/// fields are read from the tree (no second pass over bytes, no Foundation).
public struct JSONValueDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        if let direct = value as? T { return direct }
        return try T(from: ValueDecoder(value: value, codingPath: [], anyUserInfo: [:]))
    }
}

/// A dotted field path for error messages, e.g. `params.routes[2].transition`.
public func fieldPath(_ codingPath: [any CodingKey]) -> String {
    var result = ""
    for key in codingPath {
        if let index = key.intValue {
            result += "[\(index)]"
        } else {
            if !result.isEmpty { result += "." }
            result += key.stringValue
        }
    }
    return result
}

struct IndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String
    init(_ index: Int) {
        intValue = index
        stringValue = "\(index)"
    }
    init?(intValue: Int) { self.init(intValue) }
    init?(stringValue: String) { return nil }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    init(value: JSONValue, codingPath: [any CodingKey], anyUserInfo: [CodingUserInfoKey: Any]) {
        self.value = value
        self.codingPath = codingPath
        self.userInfo = anyUserInfo
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw DecodingError.typeMismatch(
                JSONObject.self,
                .init(codingPath: codingPath, debugDescription: "expected an object, found \(value.kindName)"))
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath, userInfo: userInfo))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw DecodingError.typeMismatch(
                [JSONValue].self,
                .init(codingPath: codingPath, debugDescription: "expected an array, found \(value.kindName)"))
        }
        return UnkeyedContainer(elements: elements, codingPath: codingPath, userInfo: userInfo)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath, userInfo: userInfo)
    }
}

// MARK: - Scalars

private func mismatch<T>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    DecodingError.typeMismatch(
        type, .init(codingPath: path, debugDescription: "expected \(expectedName(type)), found \(value.kindName)"))
}

private func expectedName<T>(_ type: T.Type) -> String {
    switch type {
    case is String.Type: "a string"
    case is Bool.Type: "a boolean"
    case is Double.Type, is Float.Type: "a number"
    default: "an integer"
    }
}

private func decodeString(_ value: JSONValue, _ path: [any CodingKey]) throws -> String {
    guard case .string(let text) = value else { throw mismatch(String.self, value, path) }
    return text
}

private func decodeBool(_ value: JSONValue, _ path: [any CodingKey]) throws -> Bool {
    guard case .bool(let flag) = value else { throw mismatch(Bool.self, value, path) }
    return flag
}

private func decodeDouble(_ value: JSONValue, _ path: [any CodingKey]) throws -> Double {
    guard let number = value.doubleValue else { throw mismatch(Double.self, value, path) }
    return number
}

private func decodeInteger<T: FixedWidthInteger>(
    _ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]
) throws
    -> T
{
    guard let wide = value.intValue else { throw mismatch(type, value, path) }
    guard let narrow = T(exactly: wide) else {
        throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(wide) does not fit \(type)"))
    }
    return narrow
}

private func decodeValue<T: Decodable>(
    _ type: T.Type, _ value: JSONValue, _ path: [any CodingKey], _ userInfo: [CodingUserInfoKey: Any]
) throws -> T {
    if let direct = value as? T { return direct }
    return try T(from: ValueDecoder(value: value, codingPath: path, anyUserInfo: userInfo))
}

// MARK: - Containers

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "missing field '\(key.stringValue)'"))
        }
        return value
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { object[key.stringValue]?.isNull ?? true }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decodeBool(member(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decodeString(member(key), path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decodeDouble(member(key), path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        Float(try decodeDouble(member(key), path(key)))
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decodeInteger(type, member(key), path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decodeInteger(type, member(key), path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try decodeInteger(type, member(key), path(key))
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try decodeInteger(type, member(key), path(key))
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try decodeInteger(type, member(key), path(key))
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeInteger(type, member(key), path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try decodeInteger(type, member(key), path(key))
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try decodeInteger(type, member(key), path(key))
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try decodeInteger(type, member(key), path(key))
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try decodeInteger(type, member(key), path(key))
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeValue(type, member(key), path(key), userInfo)
    }

    // Absent and null both mean "not present" for optionals, as JSON-RPC peers write either.
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try decodeString(value, path(key))
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try decodeBool(value, path(key))
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try decodeInteger(type, value, path(key))
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue] else { return nil }
        if value.isNull && type != JSONValue.self { return nil }
        return try decodeValue(type, value, path(key), userInfo)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try ValueDecoder(value: member(key), codingPath: path(key), anyUserInfo: userInfo).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: member(key), codingPath: path(key), anyUserInfo: userInfo).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: object["super"] ?? .null, codingPath: codingPath, anyUserInfo: userInfo)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: path(key), anyUserInfo: userInfo)
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: Any]) {
        self.elements = elements
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next<T>(_ type: T.Type) throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "array too short"))
        }
        defer { currentIndex += 1 }
        return (elements[currentIndex], codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (value, path) = try next(type)
        return try decodeBool(value, path)
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let (value, path) = try next(type)
        return try decodeString(value, path)
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let (value, path) = try next(type)
        return try decodeDouble(value, path)
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let (value, path) = try next(type)
        return Float(try decodeDouble(value, path))
    }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try decodeInteger(type, value, path)
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next(type)
        return try decodeValue(type, value, path, userInfo)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        let (value, path) = try next(JSONObject.self)
        return try ValueDecoder(value: value, codingPath: path, anyUserInfo: userInfo).container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next([JSONValue].self)
        return try ValueDecoder(value: value, codingPath: path, anyUserInfo: userInfo).unkeyedContainer()
    }
    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next(JSONValue.self)
        return ValueDecoder(value: value, codingPath: path, anyUserInfo: userInfo)
    }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try decodeBool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try decodeString(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try decodeDouble(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try decodeDouble(value, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try decodeInteger(type, value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decodeInteger(type, value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decodeInteger(type, value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decodeInteger(type, value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decodeInteger(type, value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try decodeInteger(type, value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeInteger(type, value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeInteger(type, value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeInteger(type, value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeInteger(type, value, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type, value, codingPath, userInfo) }
}
