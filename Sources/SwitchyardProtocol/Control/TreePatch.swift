/// One operation of a JSON Patch (RFC 6902): what `tree/changed` carries for a watcher that subscribed with
/// `deltas` (spec §15).
public struct JSONPatchOperation: Codable, Sendable, Equatable {
    /// `add`, `remove`, `replace`, `move`, `copy` or `test`.
    public var op: String
    /// A JSON Pointer (RFC 6901) into the document.
    public var path: String
    public var value: JSONValue?
    /// `move` and `copy`: where from.
    public var from: String?

    public init(op: String, path: String, value: JSONValue? = nil, from: String? = nil) {
        self.op = op
        self.path = path
        self.value = value
        self.from = from
    }
}

extension TreeSnapshot {
    /// The snapshot after a `tree/changed`: its own snapshot when it carries one, else this snapshot with its patch
    /// applied. Throws when the patch's `base` is not this snapshot's revision (the watcher missed a change; the host
    /// never sends that, so it means a bug) or the patch does not apply.
    public func applying(_ change: TreeChangedNotification.Params) throws(ResponseError) -> TreeSnapshot {
        if let snapshot = change.snapshot { return snapshot }
        guard let patch = change.patch else {
            throw ResponseError(
                .invalidParams, "tree/changed of revision \(change.revision) has neither a snapshot nor a patch")
        }
        guard change.base == revision else {
            throw ResponseError(
                .invalidParams,
                "tree/changed patches revision \(change.base.map(String.init) ?? "?"), but this snapshot is revision \(revision)"
            )
        }
        var result = self
        for (index, operation) in patch.enumerated() { try result.apply(operation, index) }
        return result
    }

    /// The host's patches replace, add and remove whole instances (`/instances/N`), `/revision` and `/root`: those are
    /// applied on the structs. Anything else RFC 6902 allows goes through the snapshot's JSON.
    private mutating func apply(_ operation: JSONPatchOperation, _ index: Int) throws(ResponseError) {
        let path = operation.path
        let decoder = JSONValueDecoder()
        func fail(_ reason: String) -> ResponseError {
            ResponseError(.invalidParams, "patch operation \(index) (\(operation.op) \(path)): \(reason)")
        }
        if operation.from == nil, path.hasPrefix("/instances/"),
            let position = JSONPatch.arrayIndex(path.dropFirst("/instances/".count))
        {
            switch operation.op {
            case "remove":
                guard instances.indices.contains(position) else { throw fail("no instance at \(position)") }
                instances.remove(at: position)
                return
            case "add", "replace":
                guard let value = operation.value,
                    let instance = try? decoder.decode(InstanceSnapshot.self, from: value)
                else {
                    throw fail("the value is not an instance snapshot")
                }
                if operation.op == "add" {
                    guard position <= instances.count, position >= 0 else {
                        throw fail("index \(position) is past the end")
                    }
                    instances.insert(instance, at: position)
                } else {
                    guard instances.indices.contains(position) else { throw fail("no instance at \(position)") }
                    instances[position] = instance
                }
                return
            default: break
            }
        }
        if operation.op == "replace", path == "/revision", let value = operation.value?.intValue, value >= 0 {
            revision = UInt64(value)
            return
        }
        if operation.from == nil, path == "/root" {
            switch operation.op {
            case "remove":
                guard root != nil else { throw fail("no member 'root'") }
                root = nil
                return
            case "add", "replace":
                guard let value = operation.value?.intValue else { throw fail("the value is not an instance id") }
                guard operation.op == "add" || root != nil else { throw fail("no member 'root'") }
                root = InstanceID(value)
                return
            default: break
            }
        }
        // Generic: through JSON.
        var document: JSONValue
        do { document = try JSONValueEncoder().encode(self) } catch { throw fail("\(error)") }
        do { try JSONPatch.apply(operation, to: &document) } catch { throw fail(error.reason) }
        do { self = try decoder.decode(TreeSnapshot.self, from: document) } catch {
            throw fail("the result is not a snapshot: \(error)")
        }
    }
}

/// RFC 6902 on a ``JSONValue``: the general path of ``TreeSnapshot/applying(_:)``.
enum JSONPatch {
    struct Failure: Error { let reason: String }

    static func apply(_ operation: JSONPatchOperation, to document: inout JSONValue) throws(Failure) {
        let path = try tokens(operation.path)
        switch operation.op {
        case "add":
            guard let value = operation.value else { throw Failure(reason: "add needs a value") }
            try edit(&document, path[...]) { target, last throws(Failure) in try add(value, to: &target, last) }
        case "remove":
            try edit(&document, path[...]) { target, last throws(Failure) in _ = try remove(from: &target, last) }
        case "replace":
            guard let value = operation.value else { throw Failure(reason: "replace needs a value") }
            try edit(&document, path[...]) { target, last throws(Failure) in
                _ = try remove(from: &target, last)
                try add(value, to: &target, last)
            }
        case "move", "copy":
            guard let from = operation.from else { throw Failure(reason: "\(operation.op) needs from") }
            let source = try tokens(from)
            let value = try get(document, source[...])
            if operation.op == "move" {
                try edit(&document, source[...]) { target, last throws(Failure) in _ = try remove(from: &target, last) }
            }
            try edit(&document, path[...]) { target, last throws(Failure) in try add(value, to: &target, last) }
        case "test":
            guard try get(document, path[...]) == operation.value ?? .null else { throw Failure(reason: "test failed") }
        default:
            throw Failure(reason: "unknown op '\(operation.op)'")
        }
    }

    /// An array index as RFC 6901 writes it: digits, without a leading zero (no sign: `-1` is not the last element).
    static func arrayIndex(_ token: Substring) -> Int? {
        guard !token.isEmpty, token.utf8.allSatisfy({ (0x30...0x39).contains($0) }), token == "0" || token.first != "0"
        else { return nil }
        return Int(token)
    }

    /// RFC 6901: `/a/b~1c/0` → `["a", "b/c", "0"]`.
    static func tokens(_ pointer: String) throws(Failure) -> [String] {
        guard !pointer.isEmpty else { return [] }
        guard pointer.hasPrefix("/") else { throw Failure(reason: "'\(pointer)' is not a JSON pointer") }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            String($0).replacing("~1", with: "/").replacing("~0", with: "~")
        }
    }

    private static func get(_ value: JSONValue, _ path: ArraySlice<String>) throws(Failure) -> JSONValue {
        guard let token = path.first else { return value }
        switch value {
        case .object(let object):
            guard let child = object[token] else { throw Failure(reason: "no member '\(token)'") }
            return try get(child, path.dropFirst())
        case .array(let array):
            guard let position = arrayIndex(token[...]), array.indices.contains(position) else {
                throw Failure(reason: "no element '\(token)'")
            }
            return try get(array[position], path.dropFirst())
        default:
            throw Failure(reason: "'\(token)' is inside a scalar")
        }
    }

    /// Runs `body` on the container that holds the path's last token.
    private static func edit(
        _ value: inout JSONValue, _ path: ArraySlice<String>, _ body: (inout JSONValue, String) throws(Failure) -> Void
    ) throws(Failure) {
        guard let token = path.first else { throw Failure(reason: "the whole document cannot be edited in place") }
        if path.count == 1 { return try body(&value, token) }
        switch value {
        case .object(var object):
            guard var child = object[token] else { throw Failure(reason: "no member '\(token)'") }
            try edit(&child, path.dropFirst(), body)
            object[token] = child
            value = .object(object)
        case .array(var array):
            guard let position = arrayIndex(token[...]), array.indices.contains(position) else {
                throw Failure(reason: "no element '\(token)'")
            }
            try edit(&array[position], path.dropFirst(), body)
            value = .array(array)
        default:
            throw Failure(reason: "'\(token)' is inside a scalar")
        }
    }

    private static func add(_ new: JSONValue, to target: inout JSONValue, _ token: String) throws(Failure) {
        switch target {
        case .object(var object):
            object[token] = new
            target = .object(object)
        case .array(var array):
            let position = token == "-" ? array.count : arrayIndex(token[...]) ?? -1
            guard position >= 0, position <= array.count else {
                throw Failure(reason: "index '\(token)' is out of range")
            }
            array.insert(new, at: position)
            target = .array(array)
        default:
            throw Failure(reason: "'\(token)' is inside a scalar")
        }
    }

    private static func remove(from target: inout JSONValue, _ token: String) throws(Failure) -> JSONValue {
        switch target {
        case .object(var object):
            guard let old = object[token] else { throw Failure(reason: "no member '\(token)'") }
            object[token] = nil
            target = .object(object)
            return old
        case .array(var array):
            guard let position = arrayIndex(token[...]), array.indices.contains(position) else {
                throw Failure(reason: "no element '\(token)'")
            }
            let old = array.remove(at: position)
            target = .array(array)
            return old
        default:
            throw Failure(reason: "'\(token)' is inside a scalar")
        }
    }
}
