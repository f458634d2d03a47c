/// Encodes `Encodable` types into a ``JSONValue``. Keys come out in the order the type encodes them (declaration
/// order for synthesized conformances), so output is the same in every process; optional `nil`s are omitted.
public struct JSONValueEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        if let direct = value as? JSONValue { return direct }
        let root = Slot()
        try value.encode(to: ValueEncoder(slot: root, codingPath: []))
        return root.resolve()
    }

    /// Encodes to compact JSON bytes.
    public func encodeBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        if let bytes = try? JSONStreamEncoder.encode(value) { return bytes }
        // Containers used out of order, or the value threw: the tree builder handles the first and reports the second.
        return JSONWriter.encode(try encode(value))
    }
}

/// A node being built; containers hand out child slots so nested containers can keep writing after creation.
/// Stored properties rather than an enum with payloads, so appends mutate in place instead of copying arrays.
private final class Slot {
    enum Kind { case empty, value, object, array }

    var kind = Kind.empty
    var value = JSONValue.null
    var keys: [String] = []
    var children: [Slot] = []
    /// Position of each key once the object is large (a dictionary's entries): linear lookups made encoding a
    /// 40,000-entry query take seconds.
    var positions: [String: Int]?

    func setValue(_ newValue: JSONValue) {
        kind = .value
        value = newValue
    }

    func becomeObject() {
        if kind != .object {
            kind = .object
            keys = []
            children = []
            positions = nil
        }
    }

    func becomeArray() {
        if kind != .array {
            kind = .array
            keys = []
            children = []
            positions = nil
        }
    }

    func resolve() -> JSONValue {
        switch kind {
        case .empty: return .object(JSONObject())
        case .value: return value
        case .object:
            // Keys are unique by construction (objectSlot reuses a key's slot).
            var object = JSONObject(minimumCapacity: keys.count)
            for (key, child) in zip(keys, children) { object.appendUnique(key, child.resolve()) }
            return .object(object)
        case .array: return .array(children.map { $0.resolve() })
        }
    }

    func objectSlot(for key: String) -> Slot {
        becomeObject()
        if let positions {
            if let index = positions[key] { return children[index] }
        } else if let index = keys.lastIndex(of: key) {
            return children[index]
        }
        let slot = Slot()
        keys.append(key)
        children.append(slot)
        if positions != nil {
            positions?[key] = keys.count - 1
        } else if keys.count > JSONObject.indexThreshold {
            positions = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        }
        return slot
    }

    func appendArraySlot() -> Slot {
        becomeArray()
        let slot = Slot()
        children.append(slot)
        return slot
    }

    var arrayCount: Int { kind == .array ? children.count : 0 }
}

private struct ValueEncoder: Encoder {
    let slot: Slot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.becomeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.becomeArray()
        return UnkeyedContainer(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(slot: slot, codingPath: codingPath)
    }
}

private func encodeValue<T: Encodable>(_ value: T, into slot: Slot, path: [any CodingKey]) throws {
    if let direct = value as? JSONValue {
        slot.setValue(direct)
        return
    }
    try value.encode(to: ValueEncoder(slot: slot, codingPath: path))
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    let codingPath: [any CodingKey]

    private func set(_ value: JSONValue, _ key: Key) { slot.objectSlot(for: key.stringValue).setValue(value) }

    mutating func encodeNil(forKey key: Key) throws { set(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.double(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.int(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(integer(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.int(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(integer(value), key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encodeValue(value, into: slot.objectSlot(for: key.stringValue), path: codingPath + [key])
    }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        let child = slot.objectSlot(for: key.stringValue)
        child.becomeObject()
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(slot: child, codingPath: codingPath + [key]))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = slot.objectSlot(for: key.stringValue)
        child.becomeArray()
        return UnkeyedContainer(slot: child, codingPath: codingPath + [key])
    }
    mutating func superEncoder() -> any Encoder {
        ValueEncoder(slot: slot.objectSlot(for: "super"), codingPath: codingPath)
    }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ValueEncoder(slot: slot.objectSlot(for: key.stringValue), codingPath: codingPath + [key])
    }
}

private func integer<T: BinaryInteger>(_ value: T) -> JSONValue {
    if let exact = Int64(exactly: value) { return .int(exact) }
    return .double(Double(value))
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]
    var count: Int { slot.arrayCount }

    private func append(_ value: JSONValue) { slot.appendArraySlot().setValue(value) }

    mutating func encodeNil() throws { append(.null) }
    mutating func encode(_ value: Bool) throws { append(.bool(value)) }
    mutating func encode(_ value: String) throws { append(.string(value)) }
    mutating func encode(_ value: Double) throws { append(.double(value)) }
    mutating func encode(_ value: Float) throws { append(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { append(.int(value)) }
    mutating func encode(_ value: UInt) throws { append(integer(value)) }
    mutating func encode(_ value: UInt8) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { append(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { append(integer(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let index = count
        try encodeValue(value, into: slot.appendArraySlot(), path: codingPath + [IndexKey(index)])
    }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        let index = count
        let child = slot.appendArraySlot()
        child.becomeObject()
        return KeyedEncodingContainer(
            KeyedContainer<NestedKey>(slot: child, codingPath: codingPath + [IndexKey(index)]))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let index = count
        let child = slot.appendArraySlot()
        child.becomeArray()
        return UnkeyedContainer(slot: child, codingPath: codingPath + [IndexKey(index)])
    }
    mutating func superEncoder() -> any Encoder {
        let index = count
        return ValueEncoder(slot: slot.appendArraySlot(), codingPath: codingPath + [IndexKey(index)])
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]

    private func set(_ value: JSONValue) { slot.setValue(value) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(.double(value)) }
    mutating func encode(_ value: Float) throws { set(.double(Double(value))) }
    mutating func encode(_ value: Int) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { set(.int(value)) }
    mutating func encode(_ value: UInt) throws { set(integer(value)) }
    mutating func encode(_ value: UInt8) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.int(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { set(integer(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try encodeValue(value, into: slot, path: codingPath) }
}
