import SwitchyardProtocol

/// `coordinator/create` without Codable for the shapes the protocol fixes, as ``RouteFastPath`` does for
/// `coordinator/route`: the params are read field by field from the parsed line and the answer is written as bytes.
/// Only the author's own types (the coordinator's `State`) still go through Codable.
///
/// Why: a plugin that restarts gets one `coordinator/create` (reason `restore`) per instance it owned, all at once,
/// and the tree is served again only after the last answer. Whatever the fast path does not recognise (a member of
/// another type, an unknown reason) goes the Codable way, so an invalid request is reported exactly as before.
///
/// `restore` (the instance as the host holds it) is checked to be an object but not decoded: the SDK rebuilds an
/// instance from its type and state and never reads it, and on a restart it is the largest member by far (a
/// stack's every entry).
enum CreateFastPath {
    /// The params in their common shape, or nil for the Codable decoder to read (and to report, if it must).
    static func params(_ value: JSONValue?) -> CoordinatorCreateRequest.Params? {
        guard case .object(let object)? = value else { return nil }
        var instance: Int64?
        var type: String?
        var reason: CoordinatorCreateRequest.Reason?
        var params: JSONValue?
        var parent: CoordinatorCreateRequest.Parent?
        var state: JSONValue?
        var fromVersion: String?
        for (key, member) in object {
            switch (key, member) {
            case ("instance", .int(let number)): instance = number
            case ("type", .string(let text)): type = text
            case ("reason", .string(let text)):
                guard let known = CoordinatorCreateRequest.Reason(rawValue: text) else { return nil }
                reason = known
            case ("parent", .null), ("restore", .null), ("restore", .object): continue
            // A null `params` or `state` is kept as null: the decoder reads a `JSONValue` member that way.
            case ("params", _): params = member
            case ("state", _): state = member
            case ("fromVersion", .string(let text)): fromVersion = text
            case ("parent", .object(let fields)):
                guard let link = Self.parent(fields) else { return nil }
                parent = link
            case ("instance", _), ("type", _), ("reason", _), ("parent", _), ("restore", _), ("fromVersion", _):
                return nil
            default: continue  // unknown members are ignored, as the decoder ignores them
            }
        }
        guard let instance, let type, let reason else { return nil }
        return CoordinatorCreateRequest.Params(
            instance: InstanceID(instance), type: type, reason: reason, params: params, parent: parent, state: state,
            fromVersion: fromVersion)
    }

    private static func parent(_ object: JSONObject) -> CoordinatorCreateRequest.Parent? {
        var instance: Int64?
        var plugin: String?
        var route: String?
        for (key, member) in object {
            switch (key, member) {
            case ("instance", .int(let number)): instance = number
            case ("plugin", .string(let text)): plugin = text
            case ("route", .string(let text)): route = text
            case ("instance", _), ("plugin", _), ("route", _): return nil
            default: continue
            }
        }
        guard let instance, let plugin, let route else { return nil }
        return CoordinatorCreateRequest.Parent(instance: InstanceID(instance), plugin: plugin, route: route)
    }

    /// The answer to a restore: `{}`, as `CoordinatorCreateRequest.Result()` encodes.
    static let restored: [UInt8] = Array("{}".utf8)

    /// `result` as its `Encodable` conformance writes it, with the state already encoded.
    static func result(_ result: CoordinatorCreateRequest.Result, state: [UInt8]?) -> [UInt8] {
        var writer = JSONWriter(capacity: 160 + (state?.count ?? 0))
        result.write(to: &writer, encodedState: state)
        return writer.bytes
    }
}

extension PluginCore {
    /// `coordinator/create` as JSON bytes (``CreateFastPath``): what ``create(_:)`` answers, Codable only for the
    /// coordinator's state.
    func createEncoded(_ params: CoordinatorCreateRequest.Params) throws -> [UInt8] {
        let (object, info) = try instantiate(params)
        guard params.reason != .restore else { return CreateFastPath.restored }
        guard params.reason != .upgrade else {
            return CreateFastPath.result(CoordinatorCreateRequest.Result(), state: info.encodeState?(object))
        }
        let result = try initialContent(of: object, info, params)
        return CreateFastPath.result(result, state: info.encodeState?(object))
    }

    /// Serves `coordinator/create` on `runtime`: the fast path for the protocol's shapes, Codable for the rest (and
    /// for its `invalidParams` answer naming the member).
    func serveCreate(on runtime: PluginRuntime) {
        runtime.onRequestEncoded(CoordinatorCreateRequest.method) { raw in
            if let params = CreateFastPath.params(raw) { return try self.createEncoded(params) }
            let params: CoordinatorCreateRequest.Params
            do { params = try Coding.decode(CoordinatorCreateRequest.Params.self, from: raw) } catch {
                throw ResponseError.invalidParams(method: CoordinatorCreateRequest.method, error)
            }
            return try self.createEncoded(params)
        }
    }
}
