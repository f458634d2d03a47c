import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// A control client's per-connection state that a method may change (`tree/subscribe`). The socket's sessions have
/// it; `HostHandle` has none.
protocol ControlSubscriber: AnyObject {
    var subscribed: Bool { get set }
    var wantsSnapshots: Bool { get set }
    /// Subscribed with `deltas`: `tree/changed` carries a patch to the snapshot the client holds.
    var wantsDeltas: Bool { get set }
    /// With deltas: the published snapshot (``SnapshotEncoder/generation``) the client holds; nil when it holds none
    /// it can patch, so the next `tree/changed` carries a full snapshot.
    var heldGeneration: Int? { get set }
    /// What the client asked to see of the protocol trace (nil: nothing).
    var trace: TraceSubscription? { get set }
}

/// A control client's `trace/subscribe`: every plugin's messages, or those of the plugins it named.
struct TraceSubscription {
    let plugins: Set<String>?

    func includes(_ plugin: String) -> Bool { plugins?.contains(plugin) ?? true }
}

/// The control methods, once: method name → typed handler working on the host. `ControlServer` dispatches socket
/// requests through ``dispatch(_:_:host:subscriber:replyEncoded:reply:)`` and `HostHandle`'s typed methods call
/// ``perform(_:_:host:subscriber:done:)``, so no two places in the host decide what a control method does.
///
/// - Important: Loop thread only.
enum HostService {
    typealias Done<T> = (Result<T, ResponseError>) -> Void

    /// One method's handler, with its types erased for the table.
    private protocol Method: Sendable {
        /// Decodes `params`, runs the handler and answers: results that are snapshots go out as encoded bytes.
        func dispatch(
            _ params: JSONValue?, host: Host, subscriber: (any ControlSubscriber)?,
            replyEncoded: @escaping ([UInt8]) -> Void, reply: @escaping Done<JSONValue>)
    }

    private struct Typed<R: ControlRequest>: Method {
        let run: @Sendable (Host, R.Params, (any ControlSubscriber)?, @escaping Done<R.Result>) -> Void
        /// Over the socket, the result as encoded bytes, without building it as a value (snapshots, from the
        /// per-instance cache); ``run`` serves in-process callers.
        var socketBytes: (@Sendable (Host, R.Params, (any ControlSubscriber)?) throws(ResponseError) -> [UInt8])?

        func dispatch(
            _ params: JSONValue?, host: Host, subscriber: (any ControlSubscriber)?,
            replyEncoded: @escaping ([UInt8]) -> Void, reply: @escaping Done<JSONValue>
        ) {
            guard let decoded = host.navigator.decode(R.Params.self, params, R.method, reply) else { return }
            if let socketBytes {
                let bytes: [UInt8]
                do { bytes = try socketBytes(host, decoded, subscriber) } catch {
                    reply(.failure(error))
                    return
                }
                replyEncoded(bytes)
                // What is left of a big answer once written (the rest of it queued) goes back to the system.
                if bytes.count > ControlServer.trimAfterBytes { SystemProcess.returnFreeMemory() }
                return
            }
            run(host, decoded, subscriber) { result in
                reply(result.flatMap { value in Result { try Coding.encode(value) }.mapError { ResponseError.wrapping($0) } })
            }
        }
    }

    private static func entry<R: ControlRequest>(
        _ type: R.Type,
        socketBytes: (@Sendable (Host, R.Params, (any ControlSubscriber)?) throws(ResponseError) -> [UInt8])? = nil,
        _ run: @escaping @Sendable (Host, R.Params, (any ControlSubscriber)?, @escaping Done<R.Result>) -> Void
    ) -> (String, any Method) {
        (R.method, Typed<R>(run: run, socketBytes: socketBytes))
    }

    private static let methods: [String: any Method] = Dictionary(uniqueKeysWithValues: [
        entry(PingRequest.self) { _, _, _, done in done(.success(Empty())) },
        entry(NavigateRequest.self) { host, request, _, done in
            host.navigator.navigate(from: request.instance, steps: request.steps, requester: .control, done)
        },
        entry(OpenRequest.self) { host, request, _, done in
            host.navigator.open(request.url, apply: true) { result in
                done(result.flatMap { outcome in outcome.result.map { .success($0) } ?? .failure(ResponseError(.internalError, "no result")) })
            }
        },
        entry(ValidateRequest.self) { host, request, _, done in
            host.navigator.open(request.url, apply: false) { result in
                switch result {
                case .success(let outcome): done(.success(ValidateRequest.Result(valid: true, steps: outcome.plan.steps)))
                case .failure(let error): done(.success(ValidateRequest.Result(valid: false, error: error)))
                }
            }
        },
        entry(TreeGetRequest.self, socketBytes: { host, _, _ throws(ResponseError) in try host.navigator.encodedSnapshot() }) { host, _, _, done in
            done(.success(host.navigator.snapshot))
        },
        entry(TreeRenderRequest.self) { host, request, _, done in
            let snapshot = host.navigator.snapshot
            done(.success(TreeRenderRequest.Result(revision: snapshot.revision, text: TreeRenderer.render(snapshot, format: request.format))))
        },
        entry(TreeQueryRequest.self) { host, request, _, done in
            done(Result { () throws(ResponseError) in TreeQueryRequest.Result(result: try host.navigator.tree.answer(request)) })
        },
        entry(
            TreeSubscribeRequest.self,
            socketBytes: { host, request, subscriber throws(ResponseError) in
                subscribe(subscriber, request)
                if let subscriber, subscriber.wantsDeltas { subscriber.heldGeneration = try host.navigator.publishSnapshot() }
                return try host.navigator.encodedSnapshot()
            }
        ) { host, request, subscriber, done in
            subscribe(subscriber, request)
            done(.success(host.navigator.snapshot))
        },
        entry(TreeUnsubscribeRequest.self) { _, _, subscriber, done in
            subscriber?.subscribed = false
            subscriber?.wantsDeltas = false
            done(.success(Empty()))
        },
        entry(UserDismissedRequest.self) { host, request, _, done in
            host.navigator.navigate(from: request.instance, steps: [.pop(request.entry)], requester: .control, reason: .user, done)
        },
        entry(UserActionRequest.self) { host, request, _, done in host.navigator.action(request, done) },
        entry(HostStatusRequest.self) { host, _, _, done in
            let issues = host.navigator.composition?.issues.map(\.error) ?? []
            done(.success(HostStatusRequest.Result(
                revision: host.navigator.tree.revision, plugins: host.pluginStatuses.map(\.wire), composition: issues,
                host: host.facts, containment: host.guardian?.status)))
        },
        entry(PluginStartRequest.self) { host, request, _, done in host.startPlugin(request.plugin, done) },
        entry(HostShutdownRequest.self) { host, _, _, done in
            done(.success(Empty()))
            host.shutdown {}
        },
        entry(TraceSubscribeRequest.self) { _, request, subscriber, done in
            subscriber?.trace = TraceSubscription(plugins: request.plugins.map(Set.init))
            done(.success(Empty()))
        },
        entry(TraceUnsubscribeRequest.self) { _, _, subscriber, done in
            subscriber?.trace = nil
            done(.success(Empty()))
        },
        entry(HostPluginsRequest.self) { host, _, _, done in done(.success(host.pluginDescriptions)) },
        entry(PluginSignalRequest.self) { host, request, _, done in host.signalPlugin(request, done) },
        entry(PluginRestartRequest.self) { host, request, _, done in host.restartPlugin(request.plugin, done) },
    ])

    private static func subscribe(_ subscriber: (any ControlSubscriber)?, _ request: TreeSubscribeRequest.Params) {
        guard let subscriber else { return }
        subscriber.subscribed = true
        subscriber.wantsSnapshots = request.snapshots ?? true
        subscriber.wantsDeltas = request.deltas ?? false
        subscriber.heldGeneration = nil
    }

    /// Answered before the app has started: a status, and the trace, which a client subscribes to early to watch
    /// the handshakes.
    private static let answeredAtOnce: Set<String> = [
        PingRequest.method, HostStatusRequest.method, TraceSubscribeRequest.method, TraceUnsubscribeRequest.method,
        HostPluginsRequest.method,
    ]

    /// Requests wait until the app has started: a client that connects right after `switchyard run` gets the
    /// composed tree, not an empty one. The methods in ``answeredAtOnce`` do not wait.
    private static func whenReady(_ method: String, _ host: Host, _ body: @escaping () -> Void) {
        if host.isStarted || answeredAtOnce.contains(method) {
            body()
        } else {
            host.whenStarted(body)
        }
    }

    /// Requests that would change the tree. Once the host has begun to stop they are refused with `shuttingDown`
    /// (§7): their plugins are being stopped, and `pluginUnavailable` would tell a client to try again.
    private static let changesTree: Set<String> = [
        NavigateRequest.method, OpenRequest.method, UserDismissedRequest.method, UserActionRequest.method,
    ]

    private static func refusedWhileStopping(_ method: String, _ host: Host) -> ResponseError? {
        guard host.shuttingDown, changesTree.contains(method) else { return nil }
        return ResponseError(.shuttingDown, "the host is shutting down and takes no more '\(method)' requests", data: ["method": .string(method)])
    }

    /// Runs a request that came over the socket; `replyEncoded` answers with a result already encoded to JSON bytes.
    static func dispatch(
        _ method: String, _ params: JSONValue?, host: Host, subscriber: (any ControlSubscriber)?,
        replyEncoded: @escaping ([UInt8]) -> Void, reply: @escaping Done<JSONValue>
    ) {
        guard let handler = methods[method] else {
            whenReady(method, host) { reply(.failure(.methodNotFound(method))) }
            return
        }
        whenReady(method, host) {
            if let refusal = refusedWhileStopping(method, host) { return reply(.failure(refusal)) }
            handler.dispatch(params, host: host, subscriber: subscriber, replyEncoded: replyEncoded, reply: reply)
        }
    }

    /// Runs a typed request in-process (`HostHandle`): the same handler as the socket's, without the JSON.
    static func perform<R: ControlRequest>(
        _ type: R.Type, _ params: R.Params, host: Host, subscriber: (any ControlSubscriber)? = nil,
        done: @escaping Done<R.Result>
    ) {
        guard let handler = methods[R.method] as? Typed<R> else {
            done(.failure(.methodNotFound(R.method)))
            return
        }
        whenReady(R.method, host) {
            if let refusal = refusedWhileStopping(R.method, host) { return done(.failure(refusal)) }
            handler.run(host, params, subscriber, done)
        }
    }
}
