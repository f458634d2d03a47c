/// Any JSON value: route params, screen props, plugin state (LSP's `LSPAny`, MCP's `Value`).
///
/// Numbers keep integers exact (`int`) and everything else as `double`; `int(1)` and `double(1.0)` compare equal.
/// Objects keep their keys in insertion order, so encoding is deterministic (no hash-seeded key order), and
/// compare equal regardless of order.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): Double(exactly: a) == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .int(let value): hasher.combine(Double(value))
        case .double(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .object(let value): hasher.combine(value)
        }
    }
}

// MARK: - Accessors

extension JSONValue {
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value as an integer, if it is one exactly (`2.0` counts).
    public var intValue: Int64? {
        switch self {
        case .int(let value): value
        case .double(let value): Int64(exactly: value)
        default: nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    public var isNull: Bool { self == .null }

    /// Member lookup on an object; `nil` for other kinds or a missing key.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var object = JSONObject(minimumCapacity: elements.count)
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

/// A JSON object: unique keys in insertion order.
///
/// Small objects (the envelopes, params and props of this protocol) are looked up linearly, which beats hashing at
/// that size. An object that grows past ``indexThreshold`` keys also keeps a hash index of key positions, so lookups
/// and inserts stay O(1) however many keys a peer sends: with linear lookups only, decoding or building an object of
/// 40,000 keys (a deep link's query) took seconds of the host's loop.
/// Duplicate keys in input keep the last value (as Python and JavaScript do).
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public internal(set) var keys: [String]
    public internal(set) var values: [JSONValue]
    /// Position of each key; nil while the object is small enough for linear lookups.
    private var positions: [String: Int]?

    /// Above this many keys an object keeps a hash index.
    static let indexThreshold = 16

    public init() {
        keys = []
        values = []
    }

    public init(minimumCapacity: Int) {
        keys = []
        values = []
        keys.reserveCapacity(minimumCapacity)
        values.reserveCapacity(minimumCapacity)
    }

    /// An object from keys known to be unique, with their positions already hashed (the parser builds them anyway).
    init(uniqueKeys keys: [String], values: [JSONValue], positions: [String: Int]) {
        self.keys = keys
        self.values = values
        self.positions = keys.count > Self.indexThreshold ? positions : nil
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { self[key] = value }
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    public subscript(key: String) -> JSONValue? {
        get {
            guard let index = index(of: key) else { return nil }
            return values[index]
        }
        set {
            if let index = index(of: key) {
                if let newValue {
                    values[index] = newValue
                } else {
                    keys.remove(at: index)
                    values.remove(at: index)
                    forgetPosition(of: key, removedAt: index)
                }
            } else if let newValue {
                appendUnique(key, newValue)
            }
        }
    }

    /// Appends without checking for an existing key. Only for callers that know the key is new.
    mutating func appendUnique(_ key: String, _ value: JSONValue) {
        keys.append(key)
        values.append(value)
        if positions != nil {
            positions?[key] = keys.count - 1
        } else {
            buildIndexIfLarge()
        }
    }

    /// Removal shifts the keys after it; only their positions change (removing the last key is O(1)).
    private mutating func forgetPosition(of key: String, removedAt index: Int) {
        // Taken out so the table is uniquely referenced and updated in place.
        guard var table = positions.take() else { return }
        guard keys.count > Self.indexThreshold else { return }
        table[key] = nil
        for position in index..<keys.count { table[keys[position]] = position }
        positions = table
    }

    private mutating func buildIndexIfLarge() {
        guard positions == nil, keys.count > Self.indexThreshold else { return }
        var index: [String: Int] = [:]
        index.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() { index[key] = position }
        positions = index
    }

    private func index(of key: String) -> Int? {
        if let positions { return positions[key] }
        // Lengths first: most keys differ in length, and comparing two unequal strings is the slow path of `==`.
        let length = key.utf8.count
        var index = keys.count - 1
        while index >= 0 {
            if keys[index].utf8.count == length && keys[index] == key { return index }
            index -= 1
        }
        return nil
    }

    public func makeIterator() -> Zip2Sequence<[String], [JSONValue]>.Iterator {
        zip(keys, values).makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.keys == rhs.keys { return lhs.values == rhs.values }
        // Small objects look up linearly, large ones through their index: linear either way.
        for (key, value) in lhs where rhs[key] != value { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent, to agree with ==.
        var combined = 0
        for (key, value) in self {
            var pair = Hasher()
            pair.combine(key)
            pair.combine(value)
            combined ^= pair.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}
