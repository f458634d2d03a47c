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
    /// The host, reachable only through its actor: the compiler keeps it (and all it owns) on the loop's thread.
    private let isolation: HostIsolation
    private let stopped: StopSignal

    private init(isolation: HostIsolation, stopped: StopSignal) {
        self.isolation = isolation
        self.stopped = stopped
    }

    /// Starts a host for `manifest` and returns once every plugin is ready or has failed its start.
    ///
    /// A plugin that fails (cannot be spawned, speaks another protocol version, exits or stays silent during the
    /// handshake) does not fail the start: it is reported in ``status()`` with a typed error, and the host serves
    /// the others.
    public static func start(manifest: Manifest, options: HostOptions = HostOptions(), logger: Logger) async throws
        -> HostHandle
    {
        let stopped = StopSignal()
        let handle: HostHandle = try await withCheckedThrowingContinuation { continuation in
            do {
                _ = try SystemThread.spawn {
                    let loop: UVLoop
                    do { loop = try UVLoop() } catch {
                        continuation.resume(throwing: error)
                        stopped.signal()
                        return
                    }
                    let isolation = HostIsolation(
                        Host(loop: loop, manifest: manifest, options: options, logger: logger),
                        executor: UVLoopExecutor(loop))
                    continuation.resume(returning: HostHandle(isolation: isolation, stopped: stopped))
                    // The loop's whole life runs in the actor's isolation: this thread is its executor.
                    isolation.assumeIsolated { isolation in
                        isolation.value.navigator.isolation = isolation
                        isolation.value.start()
                        isolation.value.loop.run()
                        let leaked = isolation.value.loop.close()
                        if leaked > 0 { logger.warning("host loop closed with \(leaked) handles still open") }
                    }
                    stopped.signal()
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        let failure: ResponseError? = await handle.onLoop { host, done in host.whenStarted { done(host.startupError) } } ?? nil
        if let failure {
            await handle.shutdown()
            throw failure
        }
        return handle
    }

    /// Runs `body` on the loop thread and waits for it to call `done`. Returns nil if the loop has already stopped,
    /// or at once when the calling task is cancelled: a caller with a deadline is never held by a busy loop.
    @discardableResult
    func onLoop<T: Sendable>(_ body: @Sendable @escaping (Host, @escaping @Sendable (T) -> Void) -> Void) async -> T? {
        guard !stopped.hasFired else { return nil }
        let isolation = self.isolation
        let once = ResumeOnce<T>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
                guard once.install(continuation) else { return }
                // A task of its own, so a cancelled caller is released at once even while the loop is busy.
                Task { once.resume(await isolation.run(body)) }
            }
        } onCancel: {
            once.resume(nil)
        }
    }

    // MARK: - Navigation

    /// Applies a chain of steps from `instance` (default: the root) as one atomic revision.
    public func navigate(from instance: InstanceID? = nil, _ steps: [NavigationStep]) async throws(ResponseError) -> NavigateRequest.Result {
        try await perform(NavigateRequest.self, .init(instance: instance, steps: steps))
    }

    /// Applies a deep link (validated first; atomic).
    public func open(_ url: String) async throws(ResponseError) -> NavigateRequest.Result {
        try await perform(OpenRequest.self, .init(url: url))
    }

    /// The dry run of ``open(_:)``: is the link valid, and which chain would it apply?
    public func validate(_ url: String) async -> ValidateRequest.Result {
        do { return try await perform(ValidateRequest.self, .init(url: url)) } catch {
            return ValidateRequest.Result(valid: false, error: error)
        }
    }

    /// The user dismissed an entry in the UI: the tree follows and the owner is told (reason `user`).
    public func userDismissed(instance: InstanceID, entry: EntryID) async throws(ResponseError) -> NavigateRequest.Result {
        try await perform(UserDismissedRequest.self, .init(instance: instance, entry: entry))
    }

    /// The user did something on a screen (`user/action`): the entry's owner decides, and its steps apply as one chain.
    public func userAction(
        instance: InstanceID, entry: EntryID, action: String, params: JSONValue? = nil
    ) async throws(ResponseError) -> NavigateRequest.Result {
        try await perform(UserActionRequest.self, .init(instance: instance, entry: entry, action: action, params: params))
    }

    /// The current tree.
    public func snapshot() async -> TreeSnapshot {
        (try? await perform(TreeGetRequest.self, Empty())) ?? TreeSnapshot(revision: 0, root: nil, instances: [])
    }

    /// The current tree rendered as text, JSON, DOT or Mermaid.
    public func render(_ format: TreeRenderRequest.Format) async -> String {
        TreeRenderer.render(await snapshot(), format: format)
    }

    /// A read-only question about the tree.
    public func query(_ query: TreeQueryRequest.Params) async throws(ResponseError) -> JSONValue {
        try await perform(TreeQueryRequest.self, query).result
    }

    /// Each plugin's command, declared coordinator types and last stderr lines (`host/plugins`, spec §15.2).
    public func describePlugins() async throws(ResponseError) -> HostPluginsRequest.Result {
        try await perform(HostPluginsRequest.self, Empty())
    }

    /// Sends a signal to a plugin's process group (`plugin/signal`, spec §15.2): only with ``HostOptions/allowFaults``.
    public func injectFault(_ signal: PluginSignalRequest.Signal, plugin: String) async throws(ResponseError) -> PluginSignalRequest.Result {
        try await perform(PluginSignalRequest.self, .init(plugin: plugin, signal: signal))
    }

    /// Stops a plugin and starts it again (`plugin/restart`, spec §15.2): only with ``HostOptions/allowFaults``.
    public func restartPlugin(_ name: String) async throws(ResponseError) -> HostStatusRequest.Plugin {
        try await perform(PluginRestartRequest.self, .init(plugin: name))
    }

    /// Runs a control method on the loop through the host's one table of control methods (`HostService`), as the
    /// socket does, without the JSON.
    private func perform<R: ControlRequest>(_ type: R.Type, _ params: R.Params) async throws(ResponseError) -> R.Result {
        try await call { host, done in HostService.perform(R.self, params, host: host, done: done) }
    }

    /// The composed route tables: what route names and deep links resolve against (for tools such as completion).
    public func routeRegistry() async -> RouteRegistry {
        await onLoop { host, done in done(host.navigator.registry) } ?? RouteRegistry()
    }

    /// Problems the composition check found at start-up.
    public func compositionIssues() async -> [CompositionIssue] {
        await onLoop { host, done in done(host.navigator.composition?.issues ?? []) } ?? []
    }

    /// CPU time the host's loop thread has used so far, in nanoseconds (nil once the host has stopped). The
    /// difference across a piece of work is the host's own cost for it, whatever else the machine was doing.
    public var loopCPUNanoseconds: UInt64? { isolation.remote.threadCPUNanoseconds }

    /// Every event from now on: tree changes, plugin state changes, destroy acknowledgements.
    public func events() -> AsyncStream<HostEvent> {
        let (stream, continuation) = AsyncStream<HostEvent>.makeStream(bufferingPolicy: .unbounded)
        let isolation = self.isolation
        // Enqueued on the loop now, before this returns: an event that follows any later call is not missed.
        let scheduled = isolation.remote.execute {
            isolation.assumeIsolated { isolation in
                let token = isolation.value.navigator.observe { event in continuation.yield(event) }
                continuation.onTermination = { _ in
                    isolation.remote.execute { isolation.assumeIsolated { $0.value.navigator.stopObserving(token) } }
                }
            }
        }
        if !scheduled { continuation.finish() }
        return stream
    }

    /// Runs `body` on the loop and turns its result into a typed throw.
    private func call<T: Sendable>(_ body: @Sendable @escaping (Host, @escaping @Sendable (Result<T, ResponseError>) -> Void) -> Void) async throws(ResponseError) -> T {
        let result: Result<T, ResponseError>? = await onLoop { host, done in body(host, done) }
        guard let result else { throw ResponseError(.shuttingDown, "the host has stopped") }
        return try result.get()
    }

    // MARK: - Plugins

    /// Which containment keeps the plugins' descendants from outliving the host (as in `host/status`).
    public func containment() async -> HostStatusRequest.Containment? {
        await onLoop { host, done in done(host.guardian?.status) } ?? nil
    }

    /// Each plugin's state, pid, restarts and last error.
    public func status() async -> [PluginStatus] {
        await onLoop { host, done in done(host.pluginStatuses) } ?? []
    }

    /// Starts a plugin that is not running (failed or stopped) again (`plugin/start`); returns its status once it
    /// serves, its instances restored and its placeholders created, or throws what it failed with.
    public func startPlugin(_ name: String) async throws(ResponseError) -> HostStatusRequest.Plugin {
        try await perform(PluginStartRequest.self, .init(plugin: name))
    }

    /// Facts about the host process: its pid and the loop's stall accounting (`host/status`'s `host`).
    public func hostFacts() async -> HostStatusRequest.Host? {
        await onLoop { host, done in done(host.facts) }
    }

    /// Stops every plugin with the shutdown ladder and waits until the loop has closed.
    public func shutdown() async {
        await onLoop { host, done in host.shutdown { done(()) } }
        await stopped.wait()
    }

    /// Waits until the host has stopped (for instance after SIGTERM).
    public func waitUntilStopped() async {
        await stopped.wait()
    }
}

/// Resumes a continuation at most once, whichever side gets there first.
final class ResumeOnce<T: Sendable>: Sendable {
    private enum State {
        case waiting
        case installed(CheckedContinuation<T?, Never>)
        /// Resumed before the continuation was installed (cancelled first).
        case done(T?)
        case finished
    }

    private let state = Mutex(State.waiting)

    init() {}

    /// Installs the continuation; resumes it at once (and returns false) if a value already came.
    func install(_ continuation: CheckedContinuation<T?, Never>) -> Bool {
        let early: T?? = state.withLock { current in
            switch current {
            case .done(let value):
                current = .finished
                return .some(value)
            default:
                current = .installed(continuation)
                return .none
            }
        }
        guard let early else { return true }
        continuation.resume(returning: early)
        return false
    }

    func resume(_ value: T?) {
        let continuation = state.withLock { current -> CheckedContinuation<T?, Never>? in
            switch current {
            case .installed(let continuation):
                current = .finished
                return continuation
            case .waiting:
                current = .done(value)
                return nil
            case .done, .finished:
                return nil
            }
        }
        continuation?.resume(returning: value)
    }
}

/// The host's isolation domain: the `Host` owned by its loop (``UVLoopIsolated``), so the compiler keeps the host and
/// everything it owns (connections, supervisors, the navigator, libuv handles) on the loop's thread.
typealias HostIsolation = UVLoopIsolated<Host>

extension UVLoopIsolated where Value == Host {
    /// Runs a navigator flow the loop's own code started (see `Navigator.startFlow`).
    func runFlow(_ number: Int) async { await value.navigator.runFlow(number, isolation: self) }
}

/// A one-shot "the host has stopped" signal that any number of tasks can wait for.
final class StopSignal: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.fired = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether the host has stopped.
    var hasFired: Bool { state.withLock { $0.fired } }

    func wait() async {
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
