public import Logging
public import SwitchyardNavigation
public import SwitchyardProtocol
import Glibc
import SwitchyardSystem
import Synchronization
import SwitchyardUV

/// The `Sendable` face of a running host, for the CLI and tests.
///
/// The host runs its libuv loop on a thread of its own (never on the Swift-concurrency pool, where a blocking
/// `uv_run` could stall other tasks); each method hops onto that thread and resumes when the loop has answered.
public final class HostHandle: Sendable {
    /// The host: an actor on the loop's thread, so the compiler keeps it (and all it owns) there.
    let host: Host
    private let stopped: StopSignal

    private init(host: Host, stopped: StopSignal) {
        self.host = host
        self.stopped = stopped
    }

    /// Starts a host for `manifest` and returns once every plugin is ready or has failed its start.
    ///
    /// A plugin that fails (cannot be spawned, speaks another protocol version, exits or stays silent during the
    /// handshake) does not fail the start: it is reported in ``status()`` with a typed error, and the host serves
    /// the others.
    @concurrent public static func start(
        manifest: Manifest, options: HostOptions = HostOptions(), logger: Logger
    ) async throws
        -> HostHandle
    {
        let stopped = StopSignal()
        let handle: HostHandle = try await withCheckedThrowingContinuation { continuation in
            do {
                _ = try SystemThread.spawn {
                    let loop: UVLoop
                    do { loop = try UVLoop() } catch {
                        continuation.resume(throwing: error)
                        stopped.signal(leakedHandles: 0)
                        return
                    }
                    let host = Host(loop: loop, manifest: manifest, options: options, logger: logger)
                    continuation.resume(returning: HostHandle(host: host, stopped: stopped))
                    // The loop's whole life runs in the host's isolation: this thread is its executor.
                    let leaked = host.assumeIsolated { $0.runLoop() }
                    if leaked > 0 { logger.warning("host loop closed with \(leaked) handles still open") }
                    stopped.signal(leakedHandles: leaked)
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        if let failure = await handle.host.startupOutcome() {
            await handle.shutdown()
            throw failure
        }
        return handle
    }

    // MARK: - Navigation

    /// Applies a chain of steps from `instance` (default: the root) as one atomic revision.
    @concurrent public func navigate(
        from instance: InstanceID? = nil, _ steps: [NavigationStep]
    ) async throws(ResponseError) -> NavigateRequest.Result {
        try await perform(NavigateRequest.self, .init(instance: instance, steps: steps))
    }

    /// Applies a deep link (validated first; atomic), or with the manifest's `deepLinks.defer` may keep it waiting:
    /// see the overload that takes `OpenRequest.Params`.
    @concurrent public func open(_ url: String) async throws(ResponseError) -> NavigateRequest.Result {
        try await perform(OpenRequest.self, .init(url: url)).navigation
    }

    /// `open` with every option: with `defer`, a link that cannot be applied yet waits (its result says
    /// `deferred`) and is applied as its own revision once it can be (Protocol/README.md §13.5).
    @concurrent public func open(_ request: OpenRequest.Params) async throws(ResponseError) -> OpenRequest.Result {
        try await perform(OpenRequest.self, request)
    }

    /// Drops the deep link waiting (the one named `id`, or any); returns it, or nil when none was waiting.
    @concurrent public func cancelDeepLink(id: Int? = nil) async throws(ResponseError) -> DeferredDeepLink? {
        try await perform(DeepLinkCancelRequest.self, .init(id: id)).cancelled
    }

    /// The deep link waiting now, if any.
    @concurrent public func pendingDeepLink() async throws(ResponseError) -> DeferredDeepLink? {
        try await perform(DeepLinkPendingRequest.self, Empty()).pending
    }

    /// The dry run of ``open(_:)``: is the link valid, and which chain would it apply?
    @concurrent public func validate(_ url: String) async -> ValidateRequest.Result {
        do { return try await perform(ValidateRequest.self, .init(url: url)) } catch {
            return ValidateRequest.Result(valid: false, error: error)
        }
    }

    /// The user dismissed an entry in the UI: the tree follows and the owner is told (reason `user`).
    @concurrent public func userDismissed(
        instance: InstanceID, entry: EntryID
    ) async throws(ResponseError) -> NavigateRequest.Result {
        try await perform(UserDismissedRequest.self, .init(instance: instance, entry: entry))
    }

    /// The user did something on a screen (`user/action`): the entry's owner decides, and its steps apply as one chain.
    @concurrent public func userAction(
        instance: InstanceID, entry: EntryID, action: String, params: JSONValue? = nil
    ) async throws(ResponseError) -> NavigateRequest.Result {
        try await perform(
            UserActionRequest.self, .init(instance: instance, entry: entry, action: action, params: params))
    }

    /// The current tree.
    @concurrent public func snapshot() async -> TreeSnapshot {
        (try? await perform(TreeGetRequest.self, Empty())) ?? TreeSnapshot(revision: 0, root: nil, instances: [])
    }

    /// The last revisions with what made each (`tree/history`, spec §15.4), oldest first; only those after `after`.
    @concurrent public func history(after: UInt64? = nil) async throws(ResponseError) -> TreeHistoryRequest.Result {
        try await perform(TreeHistoryRequest.self, .init(after: after))
    }

    /// The current tree rendered as text, JSON, DOT or Mermaid.
    @concurrent public func render(_ format: TreeRenderRequest.Format) async -> String {
        TreeRenderer.render(await snapshot(), format: format)
    }

    /// A read-only question about the tree.
    @concurrent public func query(_ query: TreeQueryRequest.Params) async throws(ResponseError) -> JSONValue {
        try await perform(TreeQueryRequest.self, query).result
    }

    /// Each plugin's command, declared coordinator types and last stderr lines (`host/plugins`, spec §15.2).
    @concurrent public func describePlugins() async throws(ResponseError) -> HostPluginsRequest.Result {
        try await perform(HostPluginsRequest.self, Empty())
    }

    /// Sends a signal to a plugin's process group (`plugin/signal`, spec §15.2): only with ``HostOptions/allowFaults``.
    @concurrent public func injectFault(
        _ signal: PluginSignalRequest.Signal, plugin: String
    ) async throws(ResponseError) -> PluginSignalRequest.Result {
        try await perform(PluginSignalRequest.self, .init(plugin: plugin, signal: signal))
    }

    /// Stops a plugin and starts it again (`plugin/restart`, spec §15.2): only with ``HostOptions/allowFaults``.
    @concurrent public func restartPlugin(_ name: String) async throws(ResponseError) -> HostStatusRequest.Plugin {
        try await perform(PluginRestartRequest.self, .init(plugin: name))
    }

    /// Replaces the faults on a plugin's pipes (`plugin/toxics`, spec §22.1): only with ``HostOptions/allowFaults``.
    @concurrent public func setToxics(
        _ params: PluginToxicsRequest.Params
    ) async throws(ResponseError) -> PluginToxicsRequest.Result {
        try await perform(PluginToxicsRequest.self, params)
    }

    /// Limits the resources of a plugin's running process, or heals them (`plugin/limits`, spec §22.5): only with
    /// ``HostOptions/allowFaults``.
    @concurrent public func setLimits(
        _ params: PluginLimitsRequest.Params
    ) async throws(ResponseError) -> PluginLimitsRequest.Result {
        try await perform(PluginLimitsRequest.self, params)
    }

    /// Replaces a running plugin with a new version (`plugin/upgrade`, spec §20.1): its instances move over in one
    /// revision, or nothing changes and the error says why.
    @concurrent public func upgradePlugin(
        _ request: PluginUpgradeRequest.Params
    ) async throws(ResponseError)
        -> PluginUpgradeRequest.Result
    {
        try await perform(PluginUpgradeRequest.self, request)
    }

    /// Reads the manifest again and applies what changed (`host/reload`, spec §20.2).
    @concurrent public func reload(force: Bool = false) async throws(ResponseError) -> HostReloadRequest.Result {
        try await perform(HostReloadRequest.self, .init(force: force))
    }

    /// Runs a control method on the loop through the host's one table of control methods (`HostService`), as the
    /// socket does, without the JSON.
    @concurrent private func perform<R: ControlRequest>(
        _ type: R.Type, _ params: R.Params
    ) async throws(ResponseError) -> R.Result {
        guard !isStopped else { throw ResponseError(.shuttingDown, "the host has stopped") }
        return try await host.perform(R.self, params)
    }

    /// The composed route tables: what route names and deep links resolve against (for tools such as completion).
    @concurrent public func routeRegistry() async -> RouteRegistry {
        guard !isStopped else { return RouteRegistry() }
        return await host.registry
    }

    /// Problems the composition check found at start-up.
    @concurrent public func compositionIssues() async -> [CompositionIssue] {
        guard !isStopped else { return [] }
        return await host.compositionIssues
    }

    /// Whether the caller runs on the host's loop thread: a caller of this handle never should after an `await` (its
    /// blocking calls there would stall the host). Tests check it.
    package var callerIsOnLoopThread: Bool { host.executor.isIsolatingCurrentThread }

    /// CPU time the host's loop thread has used so far, in nanoseconds (nil once the host has stopped). The
    /// difference across a piece of work is the host's own cost for it, whatever else the machine was doing.
    public var loopCPUNanoseconds: UInt64? { host.executor.remote.threadCPUNanoseconds }

    /// Every event from now on: tree changes, plugin state changes, destroy acknowledgements, deferred deep links.
    public func events() -> AsyncStream<HostEvent> {
        let (stream, continuation) = AsyncStream<HostEvent>.makeStream(bufferingPolicy: .unbounded)
        let host = self.host
        // Enqueued on the loop now, before this returns: an event that follows any later call is not missed.
        let scheduled = host.executor.remote.execute {
            host.assumeIsolated { host in
                let token = host.navigator.observe { event in continuation.yield(event) }
                continuation.onTermination = { _ in
                    host.executor.remote.execute { host.assumeIsolated { $0.navigator.stopObserving(token) } }
                }
            }
        }
        if !scheduled { continuation.finish() }
        return stream
    }

    // MARK: - Plugins

    /// Which containment keeps the plugins' descendants from outliving the host (as in `host/status`).
    @concurrent public func containment() async -> HostStatusRequest.Containment? {
        guard !isStopped else { return nil }
        return await host.containment
    }

    /// Each plugin's state, pid, restarts and last error.
    @concurrent public func status() async -> [PluginStatus] {
        guard !isStopped else { return [] }
        return await host.pluginStatuses
    }

    /// Starts a plugin that is not running (failed or stopped) again (`plugin/start`); returns its status once it
    /// serves, its instances restored and its placeholders created, or throws what it failed with.
    @concurrent public func startPlugin(_ name: String) async throws(ResponseError) -> HostStatusRequest.Plugin {
        try await perform(PluginStartRequest.self, .init(plugin: name))
    }

    /// Facts about the host process: its pid and the loop's stall accounting (`host/status`'s `host`).
    @concurrent public func hostFacts() async -> HostStatusRequest.Host? {
        guard !isStopped else { return nil }
        return await host.facts
    }

    /// Stops every plugin with the shutdown ladder and waits until the loop has closed.
    @concurrent public func shutdown() async {
        if !isStopped { await host.shutdown() }
        await stopped.wait()
    }

    /// How many libuv handles were still open when the host's loop closed (nil while it runs): every one is a leak
    /// (libuv's `MAKE_VALGRIND_HAPPY` check), so tests expect 0.
    public var handlesLeftOpen: Int? { stopped.leakedHandles }

    /// Whether the host has stopped: a call then answers at once instead of reaching a closed loop.
    var isStopped: Bool { stopped.hasFired }

    /// Waits until the host has stopped (for instance after SIGTERM).
    @concurrent public func waitUntilStopped() async {
        await stopped.wait()
    }
}

/// A one-shot "the host has stopped" signal that any number of tasks can wait for.
final class StopSignal: Sendable {
    private struct State {
        var fired = false
        var leakedHandles: Int?
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func signal(leakedHandles: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.fired = true
            state.leakedHandles = leakedHandles
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the host has stopped.
    var hasFired: Bool { state.withLock { $0.fired } }

    /// Handles still open when the loop closed, once it has.
    var leakedHandles: Int? { state.withLock { $0.leakedHandles } }

    @concurrent func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
