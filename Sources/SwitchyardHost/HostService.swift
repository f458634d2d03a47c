import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// A control client's per-session state that a method may change (`tree/subscribe`). The socket's sessions have
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

/// The control methods, once: method name → what the method may do and its handler, an `async` function isolated
/// to the host. The socket (``Host/serveControl(_:id:method:params:)``) and `HostHandle`'s typed methods
/// (``Host/perform(_:_:)``) both go through this table, so no two places in the host decide what a method does.
enum HostService {
    /// One method's table entry, its types erased.
    protocol Method: Sendable {
        /// Whether it waits until the app has started: a client that connects right after `switchyard run` gets the
        /// composed tree, not an empty one. Status and the trace are answered at once (a client watches the
        /// handshakes).
        var waitsForStart: Bool { get }
        /// Whether it would change the tree. Once the host has begun to stop such requests are refused with
        /// `shuttingDown` (§7): their plugins are being stopped, and `pluginUnavailable` would tell a client to try
        /// again.
        var changesTree: Bool { get }
        /// Decodes `params`, runs the method and encodes its result as JSON bytes.
        func serve(
            _ params: JSONValue?, host: isolated Host, subscriber: (any ControlSubscriber)?
        ) async throws(ResponseError) -> [UInt8]
    }

    struct Typed<R: ControlRequest>: Method {
        let waitsForStart: Bool
        let changesTree: Bool
        let run: @Sendable (isolated Host, R.Params, (any ControlSubscriber)?) async throws(ResponseError) -> R.Result
        /// Over the socket, the result as encoded bytes, without building it as a value (snapshots, from the
        /// per-instance cache); ``run`` serves in-process callers.
        let socketBytes:
            (@Sendable (isolated Host, R.Params, (any ControlSubscriber)?) throws(ResponseError) -> [UInt8])?

        func serve(
            _ params: JSONValue?, host: isolated Host, subscriber: (any ControlSubscriber)?
        ) async throws(ResponseError) -> [UInt8] {
            let decoded: R.Params
            do { decoded = try Coding.decode(R.Params.self, from: params) } catch {
                throw .invalidParams(method: R.method, error)
            }
            if let socketBytes {
                let bytes = try socketBytes(host, decoded, subscriber)
                // What is left of a big answer once written (the rest of it queued) goes back to the system.
                if bytes.count > ControlServer.trimAfterBytes { SystemProcess.returnFreeMemory() }
                return bytes
            }
            let result = try await run(host, decoded, subscriber)
            do { return try JSONValueEncoder().encodeBytes(result) } catch { throw .wrapping(error) }
        }
    }

    private static func entry<R: ControlRequest>(
        _ type: R.Type, waitsForStart: Bool = true, changesTree: Bool = false,
        socketBytes: (@Sendable (isolated Host, R.Params, (any ControlSubscriber)?) throws(ResponseError) -> [UInt8])? =
            nil,
        _ run:
            @escaping @Sendable (isolated Host, R.Params, (any ControlSubscriber)?) async throws(ResponseError) ->
            R.Result
    ) -> (String, any Method) {
        (R.method, Typed<R>(waitsForStart: waitsForStart, changesTree: changesTree, run: run, socketBytes: socketBytes))
    }

    static let methods: [String: any Method] = Dictionary(uniqueKeysWithValues: [
        entry(PingRequest.self, waitsForStart: false) { _, _, _ in Empty() },
        entry(NavigateRequest.self, changesTree: true) { host, request, _ throws(ResponseError) in
            try await host.navigator.navigate(from: request.instance, steps: request.steps, requester: .control)
        },
        entry(OpenRequest.self, changesTree: true) { host, request, _ throws(ResponseError) in
            try await host.openLink(request)
        },
        entry(DeepLinkCancelRequest.self) { host, request, _ in host.cancelLink(request.id) },
        entry(DeepLinkPendingRequest.self) { host, _, _ in DeepLinkPendingRequest.Result(pending: host.pendingLink) },
        entry(ValidateRequest.self) { host, request, _ in
            do throws(ResponseError) {
                return ValidateRequest.Result(
                    valid: true, steps: try await host.navigator.open(request.url, apply: false).plan.steps)
            } catch {
                return ValidateRequest.Result(valid: false, error: error)
            }
        },
        entry(
            TreeGetRequest.self,
            socketBytes: { host, _, _ throws(ResponseError) in try host.navigator.encodedSnapshot() }
        ) { host, _, _ in
            host.navigator.snapshot
        },
        entry(TreeRenderRequest.self) { host, request, _ in
            let snapshot = host.navigator.snapshot
            return TreeRenderRequest.Result(
                revision: snapshot.revision, text: TreeRenderer.render(snapshot, format: request.format))
        },
        entry(TreeQueryRequest.self) { host, request, _ throws(ResponseError) in
            TreeQueryRequest.Result(result: try host.navigator.tree.answer(request))
        },
        entry(
            TreeSubscribeRequest.self,
            socketBytes: { host, request, subscriber throws(ResponseError) in
                subscribe(subscriber, request)
                if let subscriber, subscriber.wantsDeltas {
                    subscriber.heldGeneration = try host.navigator.publishSnapshot()
                }
                return try host.navigator.encodedSnapshot()
            }
        ) { host, request, subscriber in
            subscribe(subscriber, request)
            return host.navigator.snapshot
        },
        entry(TreeUnsubscribeRequest.self) { _, _, subscriber in
            subscriber?.subscribed = false
            subscriber?.wantsDeltas = false
            return Empty()
        },
        entry(UserDismissedRequest.self, changesTree: true) { host, request, _ throws(ResponseError) in
            try await host.navigator.navigate(
                from: request.instance, steps: [.pop(request.entry)], requester: .control, reason: .user)
        },
        entry(UserActionRequest.self, changesTree: true) { host, request, _ throws(ResponseError) in
            try await host.navigator.action(request)
        },
        entry(TreeHistoryRequest.self) { host, request, _ in
            TreeHistoryRequest.Result(
                revisions: host.navigator.history.after(request.after), capacity: RevisionHistory.capacity)
        },
        entry(HostStatusRequest.self, waitsForStart: false) { host, _, _ in
            HostStatusRequest.Result(
                revision: host.navigator.tree.revision, plugins: host.pluginStatuses.map(\.wire),
                composition: host.navigator.composition?.issues.map(\.error) ?? [], host: host.facts,
                containment: host.guardian?.status, stateFile: host.stateFileStatus)
        },
        entry(PluginStartRequest.self) { host, request, _ throws(ResponseError) in
            try await host.startPlugin(request.plugin).get()
        },
        entry(HostShutdownRequest.self) { host, _, _ in
            // Answered first: the stop begins in a task of its own, after this answer has been written.
            host.shutdownAfterAnswer()
            return Empty()
        },
        entry(TraceSubscribeRequest.self, waitsForStart: false) { _, request, subscriber in
            subscriber?.trace = TraceSubscription(plugins: request.plugins.map(Set.init))
            return Empty()
        },
        entry(TraceUnsubscribeRequest.self, waitsForStart: false) { _, _, subscriber in
            subscriber?.trace = nil
            return Empty()
        },
        entry(HostPluginsRequest.self, waitsForStart: false) { host, _, _ in host.pluginDescriptions },
        entry(PluginSignalRequest.self) { host, request, _ throws(ResponseError) in try host.signalPlugin(request) },
        entry(PluginRestartRequest.self) { host, request, _ throws(ResponseError) in
            try await host.restartPlugin(request.plugin)
        },
        entry(PluginToxicsRequest.self) { host, request, _ throws(ResponseError) in try host.setToxics(request) },
        entry(PluginLimitsRequest.self) { host, request, _ throws(ResponseError) in try host.setLimits(request) },
        entry(PluginUpgradeRequest.self) { host, request, _ throws(ResponseError) in
            try await host.upgradePlugin(request)
        },
        entry(HostReloadRequest.self) { host, request, _ throws(ResponseError) in
            try await host.reload(force: request.force ?? false)
        },
    ])

    private static func subscribe(_ subscriber: (any ControlSubscriber)?, _ request: TreeSubscribeRequest.Params) {
        guard let subscriber else { return }
        subscriber.subscribed = true
        subscriber.wantsSnapshots = request.snapshots ?? true
        subscriber.wantsDeltas = request.deltas ?? false
        subscriber.heldGeneration = nil
    }
}

extension Host {
    /// Runs a control method through the table: waits for start-up if the method does, refuses what would change
    /// the tree once the host stops, and answers with the result's JSON bytes.
    func serve(
        _ method: String, _ params: JSONValue?, subscriber: (any ControlSubscriber)?
    ) async throws(ResponseError) -> [UInt8] {
        guard let entry = HostService.methods[method] else {
            await waitUntilStarted()
            throw .methodNotFound(method)
        }
        try await admit(method, entry)
        return try await entry.serve(params, host: self, subscriber: subscriber)
    }

    /// A request from a control client's socket: one task on the loop, from the line read to the answer written.
    func serveControl(_ session: ControlSession, id: RequestID, method: String, params: JSONValue?) async {
        do throws(ResponseError) {
            session.write(
                Message.responseLine(id: id, encodedResult: try await serve(method, params, subscriber: session)))
        } catch {
            session.send(.errorResponse(id: id, error: error))
        }
    }

    /// Runs a typed control method in-process (`HostHandle`): the same entry as the socket's, without the JSON.
    func perform<R: ControlRequest>(_ type: R.Type, _ params: R.Params) async throws(ResponseError) -> R.Result {
        guard !closed else { throw ResponseError(.shuttingDown, "the host has stopped") }
        guard let entry = HostService.methods[R.method] as? HostService.Typed<R> else {
            throw .methodNotFound(R.method)
        }
        try await admit(R.method, entry)
        return try await entry.run(self, params, nil)
    }

    private func admit(_ method: String, _ entry: any HostService.Method) async throws(ResponseError) {
        if entry.waitsForStart { await waitUntilStarted() }
        if shuttingDown, entry.changesTree {
            throw ResponseError(
                .shuttingDown, "the host is shutting down and takes no more '\(method)' requests",
                data: ["method": .string(method)])
        }
    }
}
