import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSpec

extension PluginSession {
    /// What the checker calls itself in `initialize`'s `host`.
    static let hostInfo = PluginInfo(name: "switchyard check-plugin", version: "0.1.0")

    /// Sends `initialize` as the host does and waits up to `startTimeoutMs` for the answer.
    ///
    /// - Parameters:
    ///   - versions: the versions offered (the host's by default).
    ///   - restarts: set for a session that plays a restarted plugin (§16).
    ///   - unknownMembers: adds members the spec does not define, to the envelope, the params and the limits: a
    ///     receiver MUST ignore them (§2, §8 initialize).
    func initialize(
        versions: [Int] = ProtocolVersion.supported, restarts: Int? = nil, unknownMembers: Bool = false
    ) -> Reply {
        let typed = InitializeRequest.Params(
            protocolVersions: versions, host: Self.hostInfo, pluginName: launch.pluginName, limits: launch.limits,
            restarts: restarts)
        guard var params = (try? Coding.encode(typed))?.objectValue else { return .ended }
        if unknownMembers, var limits = params["limits"]?.objectValue {
            limits["maxFutureThingsPerSecond"] = 7
            params["limits"] = .object(limits)
            params["experimentalCapabilities"] = ["checkPlugin": ["version": 2, "features": ["a", "b"]]]
        }
        let id = nextID(for: InitializeRequest.method)
        var envelope: JSONObject = [
            "jsonrpc": "2.0", "id": id.json, "method": .string(InitializeRequest.method), "params": .object(params),
        ]
        if unknownMembers { envelope["trace"] = ["origin": "check-plugin", "sequence": 1] }
        sendLine(JSONWriter.encode(.object(envelope)))
        return wait(for: id, timeoutMs: launch.startTimeoutMs)
    }

    /// The handshake a session needs before its own check: `initialize`, then `initialized`. Nil when the plugin
    /// did not complete it (the caller reports why).
    func ready(restarts: Int? = nil, unknownMembers: Bool = false) -> (reply: Reply, result: InitializeRequest.Result?)
    {
        let reply = initialize(restarts: restarts, unknownMembers: unknownMembers)
        guard
            case .success(let result) = decode(
                reply, as: InitializeRequest.Result.self, method: InitializeRequest.method),
            ProtocolVersion.supported.contains(result.protocolVersion)
        else { return (reply, nil) }
        notify(InitializedNotification.method)
        return (reply, result)
    }
}

extension MainSession {
    /// §3.1: the handshake, timed from spawn; §5/§14: the route table it carries.
    func handshake() -> InitializeRequest.Result? {
        let mark = session.mark
        let reply = session.initialize()
        let elapsed = ContinuousClock.now - session.started
        let expected =
            "a result {protocolVersion (one of \(ProtocolVersion.supported)), plugin {name, version}, coordinators} within startTimeoutMs (\(session.launch.startTimeoutMs) ms)"
        switch session.decode(reply, as: InitializeRequest.Result.self, method: InitializeRequest.method) {
        case .failure(.none(let reply)):
            record.fail(.handshake, "initialize: \(reply.description)", expected: expected, since: mark)
            return nil
        case .failure(.plugin(let error)):
            record.fail(
                .handshake,
                "initialize was answered with the error \(error.code.rawValue) \(error.code.name): \(error.message)",
                expected: expected, since: mark)
            return nil
        case .failure(.host(let error)):
            record.fail(.handshake, error.message, expected: expected, since: mark)
            if case .result(let raw) = reply { checkSchema(raw) }
            return nil
        case .success(let result):
            guard ProtocolVersion.supported.contains(result.protocolVersion) else {
                record.fail(
                    .handshake,
                    "initialize chose protocol version \(result.protocolVersion), which was not offered (\(ProtocolVersion.supported))",
                    expected: expected, since: mark)
                return nil
            }
            readyAfter = elapsed
            pluginInfo = result.plugin
            contract = RouteContract(
                plugin: result.plugin, protocolVersion: result.protocolVersion, coordinators: result.coordinators)
            ledger.note(
                .handshake,
                "protocol \(result.protocolVersion), plugin '\(result.plugin.name)' \(result.plugin.version), \(result.coordinators.count) coordinator type(s), ready \(milliseconds(elapsed)) ms after spawn"
            )
            if case .result(let raw) = reply { checkSchema(raw) }
            return result
        }
    }

    /// The route table against `initialize.json#/$defs/result`.
    private func checkSchema(_ raw: JSONValue) {
        guard ledger.wants(.routeTable) else { return }
        do {
            let errors = try validator.validate(raw, against: "initialize.json#/$defs/result")
            for error in errors.prefix(10) {
                ledger.add(
                    .routeTable,
                    Finding(
                        .fail, "the initialize result does not match the schema: \(error)",
                        expected: "a result valid against Protocol/schema/initialize.json#/$defs/result"))
            }
        } catch {
            ledger.add(.routeTable, Finding(.fail, "the schema could not be applied: \(error)"))
        }
    }

    /// §14: the table composes (the rules a host applies to each plugin's own table and its own targets). Routes
    /// into other plugins cannot be judged alone and are listed.
    func checkComposition(_ result: InitializeRequest.Result) -> Bool {
        let plugin = session.launch.pluginName
        let model = HostModel(plugin: plugin, coordinators: result.coordinators)
        let foreign = model.foreignTargets
        let report = Composition.check(
            tables: [(plugin, result.coordinators)], declaredPlugins: [plugin] + foreign.map(\.plugin), root: nil)
        let errors = report.issues.filter { $0.severity == .error }
        for issue in errors {
            ledger.add(
                .routeTable,
                Finding(
                    .fail, issue.description,
                    expected: "a table the host composes (§5, §14); the host leaves this plugin out"))
        }
        let routes = result.coordinators.reduce(0) { $0 + $1.routes.count }
        var note = "\(result.coordinators.count) type(s), \(routes) route(s)"
        if !foreign.isEmpty {
            note +=
                "; opens other plugins' types \(foreign.map(\.description).joined(separator: ", ")) (checked against stand-ins; whether they exist is the app's composition)"
        }
        ledger.note(.routeTable, note)
        return errors.isEmpty
    }
}

func milliseconds(_ duration: Duration) -> Int {
    let (seconds, attoseconds) = duration.components
    return Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000)
}

func millisecondsValue(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
}
