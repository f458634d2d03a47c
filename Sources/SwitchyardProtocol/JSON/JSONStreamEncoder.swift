import Synchronization

/// Encodes an `Encodable` value straight into JSON bytes, without building a `JSONValue` tree first.
///
/// Why: a tree snapshot of 1,000 instances went through one class instance per node (the `JSONValue` builder), then
/// a second walk to write it; most of `tree/get`'s time and a transient 20 MiB of heap were that intermediate tree.
/// Writing as the value encodes itself is one walk and one growing buffer.
///
/// Codable never says when a container is finished, so containers live on a stack: writing into a container first
/// closes every container opened after it. That is exactly how synthesized and hand-written `encode(to:)` use
/// containers. A use out of that order (writing into a container after a sibling was opened, `superEncoder`, two
/// values into one single-value container) throws ``Misuse``; ``JSONValueEncoder/encodeBytes(_:)`` then falls back to
/// the tree builder, so the output is always right. `codingPath` is empty: keeping it costs an array per value and
/// only error messages read it.
struct JSONStreamEncoder {
    struct Misuse: Error {}

    static func encode<T: Encodable>(_ value: T, capacity: Int = 256) throws -> [UInt8] {
        let state = StreamState(capacity: capacity)
        try state.encodeValue(value)
        guard !state.failed else { throw Misuse() }
        state.closeAll()
        return state.bytes
    }
}

/// One encoding's state, shared by the encoder and its containers (Codable hands them around by value, so they
/// share it by reference).
private final class StreamState {
    /// Unchecked exclusivity: every access is one call of ``with(_:)``, and every body given to it is in this file
    /// (the type is private) and calls no code from outside it, so none can reach this object again while it holds the core. Code from
    /// outside runs between two of them: a value's own `encode(to:)`, a ``JSONWritable``'s `write(to:)` (on the
    /// writer taken out of the core), a key's `stringValue`. The runtime's checks were 900 of the 21,600
    /// instructions of a Swift SDK route answer (14 accesses, one state).
    @exclusivity(unchecked) private var core: StreamCore

    init(capacity: Int) { unsafe core = StreamCore(writer: JSONWriter(capacity: capacity)) }

    /// The one way to the core: see its declaration for why it is not checked at run time.
    @inline(__always)
    func with<Result>(_ body: (inout StreamCore) -> Result) -> Result { unsafe body(&core) }

    var failed: Bool { with { $0.failed } }
    func fail() { with { $0.failed = true } }
    var bytes: [UInt8] { with { $0.writer.bytes } }
    func closeAll() { with { $0.close(above: -1) } }
    func push(isObject: Bool) -> (depth: Int, id: Int) { with { $0.push(isObject: isObject) } }
    func prepare(depth: Int, id: Int) -> Bool { with { $0.prepare(depth: depth, id: id) } }
    func key(_ key: String, depth: Int, id: Int) -> Bool { with { $0.key(key, depth: depth, id: id) } }
    func integer<V: BinaryInteger>(_ value: V) { with { $0.integer(value) } }
    func write(_ body: (inout JSONWriter) -> Void) { with { body(&$0.writer) } }

    func encodeValue<T: Encodable>(_ value: T) throws {
        let dynamicType = type(of: value)
        if dynamicType == JSONValue.self, let direct = value as? JSONValue {
            write { $0.write(direct) }
        } else if dynamicType == JSONObject.self, let object = value as? JSONObject {
            write { $0.write(.object(object)) }
        } else if WritableTypes.conforms(dynamicType), let writable = value as? any JSONWritable {
            // Anyone's conformance: it writes on the writer taken out of the core, outside `with` (see `core`).
            var writer = with { core in
                let taken = core.writer
                core.writer = JSONWriter(capacity: 0)
                return taken
            }
            writable.write(to: &writer)
            with { $0.writer = writer }
        } else {
            let (mark, depth) = with { ($0.writer.bytes.count, $0.stack.count) }
            // Outside `with`: the value's encoding comes back here through its containers.
            try value.encode(to: StreamEncoder(state: self, mark: mark))
            // A value that asked for no container encodes as `{}`, like the tree builder.
            with { core in
                if core.writer.bytes.count == mark && core.stack.count == depth { core.writer.writeRaw("{}") }
            }
        }
    }
}

/// The state proper: the bytes written so far and the open containers.
private struct StreamCore {
    var writer: JSONWriter
    /// Open containers, innermost last.
    var stack: [Frame] = []
    var nextID = 0
    var failed = false

    struct Frame {
        let id: Int
        let isObject: Bool
        var count: Int
    }

    /// Closes every container deeper than `depth`.
    mutating func close(above depth: Int) {
        while stack.count - 1 > depth, let frame = stack.popLast() {
            writer.append(frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }

    /// Opens a container for the value being written.
    mutating func push(isObject: Bool) -> (depth: Int, id: Int) {
        nextID += 1
        writer.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        stack.append(Frame(id: nextID, isObject: isObject, count: 0))
        return (stack.count - 1, nextID)
    }

    /// Readies container `id` at `depth` for one more element (closing deeper ones, writing the comma).
    mutating func prepare(depth: Int, id: Int) -> Bool {
        guard depth < stack.count, stack[depth].id == id, !failed else {
            failed = true
            return false
        }
        close(above: depth)
        if stack[depth].count > 0 { writer.append(UInt8(ascii: ",")) }
        stack[depth].count += 1
        return true
    }

    mutating func key(_ key: String, depth: Int, id: Int) -> Bool {
        guard prepare(depth: depth, id: id) else { return false }
        writer.writeString(key)
        writer.append(UInt8(ascii: ":"))
        return true
    }

    mutating func integer<V: BinaryInteger>(_ value: V) {
        if let exact = Int64(exactly: value) { writer.writeInteger(exact) } else { writer.writeDouble(Double(value)) }
    }
}

/// Which types are ``JSONWritable``, remembered: the runtime's conformance lookup for a type that does not conform
/// (a plugin's `State`, on every answer) cost more than encoding the value itself.
private enum WritableTypes {
    private static let known = Mutex<[ObjectIdentifier: Bool]>([:])

    static func conforms(_ type: Any.Type) -> Bool {
        let key = ObjectIdentifier(type)
        if let answer = known.withLock({ $0[key] }) { return answer }
        let answer = type is any JSONWritable.Type
        known.withLock { $0[key] = answer }
        return answer
    }
}

private struct StreamEncoder: Encoder {
    let state: StreamState
    /// Where this value starts: asking for a second container (class hierarchies do) finds bytes already written.
    let mark: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if state.with({ $0.writer.bytes.count != mark }) { state.fail() }
        let (depth, id) = state.push(isObject: true)
        return KeyedEncodingContainer(StreamKeyed<Key>(state: state, depth: depth, id: id))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if state.with({ $0.writer.bytes.count != mark }) { state.fail() }
        let (depth, id) = state.push(isObject: false)
        return StreamUnkeyed(state: state, depth: depth, id: id)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { StreamSingle(state: state, mark: mark) }
}

private struct StreamKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let state: StreamState
    let depth: Int
    let id: Int
    var codingPath: [any CodingKey] { [] }

    private func key(_ key: Key) throws {
        guard state.key(key.stringValue, depth: depth, id: id) else { throw JSONStreamEncoder.Misuse() }
    }

    mutating func encodeNil(forKey key: Key) throws { try self.key(key); state.write { $0.writeRaw("null") } }
    mutating func encode(_ value: Bool, forKey key: Key) throws {
        try self.key(key); state.write { $0.writeRaw(value ? "true" : "false") }
    }
    mutating func encode(_ value: String, forKey key: Key) throws {
        try self.key(key); state.write { $0.writeString(value) }
    }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try self.key(key); state.write { $0.writeDouble(value) }
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try self.key(key); state.write { $0.writeDouble(Double(value)) }
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try self.key(key); state.integer(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try self.key(key)
        try state.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    )
        -> KeyedEncodingContainer<NestedKey>
    {
        guard state.key(key.stringValue, depth: depth, id: id) else {
            return KeyedEncodingContainer(StreamKeyed<NestedKey>(state: state, depth: Int.max, id: -1))
        }
        let (depth, id) = state.push(isObject: true)
        return KeyedEncodingContainer(StreamKeyed<NestedKey>(state: state, depth: depth, id: id))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        guard state.key(key.stringValue, depth: depth, id: id) else {
            return StreamUnkeyed(state: state, depth: Int.max, id: -1)
        }
        let (depth, id) = state.push(isObject: false)
        return StreamUnkeyed(state: state, depth: depth, id: id)
    }

    mutating func superEncoder() -> any Encoder { state.fail(); return StreamEncoder(state: state, mark: -1) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        state.fail(); return StreamEncoder(state: state, mark: -1)
    }
}

private struct StreamUnkeyed: UnkeyedEncodingContainer {
    let state: StreamState
    let depth: Int
    let id: Int
    var codingPath: [any CodingKey] { [] }
    var count: Int {
        state.with { core in
            depth < core.stack.count && core.stack[depth].id == id ? core.stack[depth].count : 0
        }
    }

    private func next() throws {
        guard state.prepare(depth: depth, id: id) else { throw JSONStreamEncoder.Misuse() }
    }

    mutating func encodeNil() throws { try next(); state.write { $0.writeRaw("null") } }
    mutating func encode(_ value: Bool) throws { try next(); state.write { $0.writeRaw(value ? "true" : "false") } }
    mutating func encode(_ value: String) throws { try next(); state.write { $0.writeString(value) } }
    mutating func encode(_ value: Double) throws { try next(); state.write { $0.writeDouble(value) } }
    mutating func encode(_ value: Float) throws { try next(); state.write { $0.writeDouble(Double(value)) } }
    mutating func encode(_ value: Int) throws { try next(); state.integer(value) }
    mutating func encode(_ value: Int8) throws { try next(); state.integer(value) }
    mutating func encode(_ value: Int16) throws { try next(); state.integer(value) }
    mutating func encode(_ value: Int32) throws { try next(); state.integer(value) }
    mutating func encode(_ value: Int64) throws { try next(); state.integer(value) }
    mutating func encode(_ value: UInt) throws { try next(); state.integer(value) }
    mutating func encode(_ value: UInt8) throws { try next(); state.integer(value) }
    mutating func encode(_ value: UInt16) throws { try next(); state.integer(value) }
    mutating func encode(_ value: UInt32) throws { try next(); state.integer(value) }
    mutating func encode(_ value: UInt64) throws { try next(); state.integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try next()
        try state.encodeValue(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        guard state.prepare(depth: depth, id: id) else {
            return KeyedEncodingContainer(StreamKeyed<NestedKey>(state: state, depth: Int.max, id: -1))
        }
        let (depth, id) = state.push(isObject: true)
        return KeyedEncodingContainer(StreamKeyed<NestedKey>(state: state, depth: depth, id: id))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        guard state.prepare(depth: depth, id: id) else { return StreamUnkeyed(state: state, depth: Int.max, id: -1) }
        let (depth, id) = state.push(isObject: false)
        return StreamUnkeyed(state: state, depth: depth, id: id)
    }

    mutating func superEncoder() -> any Encoder { state.fail(); return StreamEncoder(state: state, mark: -1) }
}

/// A single value: written where the encoder stands (after a key, an array comma, or at the top), once.
private struct StreamSingle: SingleValueEncodingContainer {
    let state: StreamState
    let mark: Int
    var codingPath: [any CodingKey] { [] }

    private func writing() throws -> StreamState {
        guard state.with({ $0.writer.bytes.count == mark && !$0.failed }) else {
            state.fail()
            throw JSONStreamEncoder.Misuse()
        }
        return state
    }

    mutating func encodeNil() throws { try writing().write { $0.writeRaw("null") } }
    mutating func encode(_ value: Bool) throws { try writing().write { $0.writeRaw(value ? "true" : "false") } }
    mutating func encode(_ value: String) throws { try writing().write { $0.writeString(value) } }
    mutating func encode(_ value: Double) throws { try writing().write { $0.writeDouble(value) } }
    mutating func encode(_ value: Float) throws { try writing().write { $0.writeDouble(Double(value)) } }
    mutating func encode(_ value: Int) throws { try writing().integer(value) }
    mutating func encode(_ value: Int8) throws { try writing().integer(value) }
    mutating func encode(_ value: Int16) throws { try writing().integer(value) }
    mutating func encode(_ value: Int32) throws { try writing().integer(value) }
    mutating func encode(_ value: Int64) throws { try writing().integer(value) }
    mutating func encode(_ value: UInt) throws { try writing().integer(value) }
    mutating func encode(_ value: UInt8) throws { try writing().integer(value) }
    mutating func encode(_ value: UInt16) throws { try writing().integer(value) }
    mutating func encode(_ value: UInt32) throws { try writing().integer(value) }
    mutating func encode(_ value: UInt64) throws { try writing().integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try writing().encodeValue(value) }
}
