import Glibc
import SwitchyardClient
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import Synchronization

/// The host of an experiment with host faults (`hostKill`, `diskFull`): `switchyard run` as a child process on a
/// state file of the experiment's, driven through its control socket, which the experiment kills with SIGKILL and
/// starts again on the same `--state`, and whose file-size limit it lowers to fill "the disk" under that file.
///
/// The child runs `--script -` with its stdin a pipe from this process: the host stops when the experiment closes
/// it, and also when this process dies, however it dies, so no host outlives its experiment. Its plugins are the
/// host's to contain (§16), as in any run.
final class ChildHost: ExperimentHost {
    /// Where the child keeps its socket, state file and manifest.
    let directory: String
    let socketPath: String
    let statePath: String
    let manifestPath: String
    private let executable: String

    private struct Generation {
        var process: ChildProcess?
        /// The load's connection; nil while the host is down or starting.
        var client: AsyncControlClient?
        var watcher: AsyncControlClient?
        /// Set just before the experiment kills the host: a call that fails then was in flight at the kill.
        var killing = false
        /// The host's last stderr lines, for a start that fails.
        var stderr: [String] = []
        var ready: CheckedContinuation<Bool, Never>?
        /// The load's host lifetime: one more at each ``resume()``. A request is sent only to the lifetime it was
        /// invoked in (``expectedLifetime``), so the checkers' epochs are the host's.
        var lifetime = 0
        /// The task relaying the watcher's notifications as events.
        var relay: Task<Void, Never>?
        /// A started host's connections until ``resume()``.
        var pending: (client: AsyncControlClient, watcher: AsyncControlClient)?
        /// This start's word: nil while it is starting, then whether it said it was ready (false: it exited, or the
        /// deadline passed, first).
        var isReady: Bool?
        /// Which start the process is (each start's stderr reader says which it reads).
        var epoch = 0
        var events: AsyncStream<ExperimentEvent>.Continuation?
        var victim = ""
        /// Host exits the experiment did not cause, with when they were seen: each a violation of the host checker.
        var unexpectedExits: [(at: ContinuousClock.Instant, reason: String)] = []
    }

    private let generation = Mutex(Generation())

    /// A child host for the app of `manifest` (written into `directory` as `app.json`); `executable` is the
    /// `switchyard` to run.
    init(manifest: Manifest, directory: String, executable: String) throws(ChaosExperimentError) {
        self.directory = directory
        self.socketPath = directory + "/host.sock"
        self.statePath = directory + "/tree.json"
        self.manifestPath = directory + "/app.json"
        self.executable = executable
        do {
            let encoded = try Coding.encode(manifest)
            try FileSystem.writeFileAtomically(manifestPath, Array(JSONWriter.string(encoded).utf8), mode: 0o644)
        } catch {
            throw .hostDidNotStart("cannot write the experiment's manifest \(manifestPath): \(error)")
        }
    }

    /// The `switchyard` next to this process's products (where `swift build` puts every executable of the package).
    static var defaultExecutable: String { defaultProductsDirectory() + "/switchyard" }

    // MARK: - Lifecycle

    /// Starts the host and waits until it serves (its plugins ready or failed), at most `timeout`; returns the tree
    /// it serves first. The load and the relay of events wait for ``resume()``, so the experiment records the start
    /// before anything of the new host.
    func start(timeout: Duration = .seconds(60)) async throws(ChaosExperimentError) -> Started {
        let arguments = [
            executable, "run", "--manifest", manifestPath, "--socket", socketPath, "--state", statePath, "--script",
            "-",
            "--allow-faults",
        ]
        var environment = SystemProcess.environment
        environment["SWITCHYARD_PRODUCTS_DIR"] = defaultProductsDirectory()
        let process: ChildProcess
        // Lines from a killed host's stderr may still arrive (its reader thread drains what was written): only the
        // newest process speaks for the host.
        let epoch = generation.withLock { state in
            state.epoch += 1
            state.isReady = nil
            state.stderr = []
            return state.epoch
        }
        do {
            process = try ChildProcess(
                arguments, environment: environment, stdout: .lines { _ in },
                stderr: .lines { [weak self] line in self?.stderr(line, epoch: epoch) })
        } catch {
            throw .hostDidNotStart("cannot start \(executable): \(error)")
        }
        generation.withLock { $0.process = process }
        let deadline = Task {
            try? await Task.sleep(for: timeout)
            self.resolveReady(false, epoch: epoch)
        }
        let ready = await withCheckedContinuation { continuation in
            // Resolved already (its stderr may have ended before this line): at once; else by the stderr reader or
            // the deadline, whichever comes first.
            let resolved: Bool? = generation.withLock { state in
                if let ready = state.isReady { return ready }
                state.ready = continuation
                return nil
            }
            if let resolved { continuation.resume(returning: resolved) }
        }
        deadline.cancel()
        guard ready else {
            process.signal(SIGKILL)
            _ = process.waitForExit(milliseconds: 5_000)
            throw .hostDidNotStart(
                "\(executable) did not say it was ready within \(timeout): "
                    + generation.withLock { $0.stderr.suffix(5).joined(separator: " | ") })
        }
        var opened: [AsyncControlClient] = []
        do {
            let client = try AsyncControlClient(path: socketPath, timeoutMilliseconds: 60_000)
            opened.append(client)
            let plugins = try await waitForPlugins(client, until: ContinuousClock.now + timeout)
            let watcher = try AsyncControlClient(path: socketPath, timeoutMilliseconds: 30_000)
            opened.append(watcher)
            let served = try await watcher.call(TreeSubscribeRequest.self, .init(snapshots: true))
            generation.withLock {
                $0.pending = (client, watcher)
                $0.killing = false
            }
            return Started(tree: served, plugins: plugins)
        } catch {
            for connection in opened { connection.close() }
            throw .hostDidNotStart("cannot reach the host at \(socketPath): \(error)")
        }
    }

    /// Opens the started host to the load, and relays what it publishes from its first revision after the tree
    /// ``start(timeout:)`` returned.
    func resume() {
        guard
            let (client, watcher) = generation.withLock({ state in
                defer { state.pending = nil }
                return state.pending
            })
        else { return }
        let (continuation, victim) = generation.withLock { state in
            state.client = client
            state.watcher = watcher
            state.lifetime += 1
            return (state.events, state.victim)
        }
        // Every notification the connection delivered is relayed, to its end: what a host published just before its
        // kill is still its history, and ``kill()`` waits for this relay to end before the restart is recorded.
        let relay = Task {
            for await message in watcher.notifications {
                guard case .notification(let method, let params) = message, let params else { continue }
                if method == TreeChangedNotification.method,
                    let change = try? Coding.decode(TreeChangedNotification.Params.self, from: params),
                    let snapshot = change.snapshot
                {
                    let instance = snapshot.instances.first { $0.plugin == victim }
                    continuation?.yield(.tree(revision: change.revision, victim: instance, whole: snapshot))
                } else if method == PluginChangedNotification.method,
                    let status = try? Coding.decode(PluginChangedNotification.Params.self, from: params)
                {
                    continuation?.yield(.plugin(status))
                }
            }
        }
        generation.withLock { $0.relay = relay }
    }

    /// A started host: the tree it served first, and its plugins then.
    struct Started {
        let tree: TreeSnapshot
        let plugins: [HostStatusRequest.Plugin]
    }

    /// Waits until no plugin of the host is starting (a restarted host restores its tree and its plugins' instances
    /// first, and the experiment's verdicts are about what happens after); returns their states.
    private func waitForPlugins(
        _ client: AsyncControlClient, until deadline: ContinuousClock.Instant
    ) async throws(ControlClient.Failure) -> [HostStatusRequest.Plugin] {
        while true {
            let plugins = try await client.call(HostStatusRequest.self, Empty()).plugins
            let settled = plugins.allSatisfy { $0.state == "ready" || $0.state == "failed" }
            if settled || ContinuousClock.now >= deadline || Task.isCancelled { return plugins }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    private func stderr(_ line: String?, epoch: Int) {
        guard let line else {
            // The host's stderr ended: it exited.
            generation.withLock { state in
                if state.epoch == epoch, !state.killing, state.client != nil {
                    state.unexpectedExits.append(
                        (
                            ContinuousClock.now,
                            "the host exited on its own: " + state.stderr.suffix(3).joined(separator: " | ")
                        ))
                }
            }
            resolveReady(false, epoch: epoch)
            return
        }
        let isReady = line.contains("switchyard: ready")
        generation.withLock { state in
            guard state.epoch == epoch else { return }
            state.stderr.append(line)
            if state.stderr.count > 40 { state.stderr.removeFirst(state.stderr.count - 40) }
        }
        if isReady { resolveReady(true, epoch: epoch) }
    }

    private func resolveReady(_ ready: Bool, epoch: Int) {
        let waiter = generation.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard state.epoch == epoch, state.isReady == nil else { return nil }
            state.isReady = ready
            defer { state.ready = nil }
            return state.ready
        }
        waiter?.resume(returning: ready)
    }

    /// SIGKILL to the host, after asking it which revision it has written (the bound the restored tree must meet);
    /// returns that revision. The host's plugins end with it (its containment).
    func kill() async -> UInt64? {
        let client = generation.withLock { $0.client }
        let written = try? await client?.call(HostStatusRequest.self, Empty()).stateFile?.writtenRevision
        let process = generation.withLock { state -> ChildProcess? in
            state.killing = true
            state.client = nil
            return state.process
        }
        process?.signal(SIGKILL)
        _ = process?.waitForExit(milliseconds: 10_000)
        let (watcher, relay) = generation.withLock { state in
            // Reaped: its pid may be anyone's by now, and a full disk must not be put on it.
            state.process = nil
            defer {
                state.watcher = nil
                state.relay = nil
            }
            return (state.watcher, state.relay)
        }
        client?.close()
        // The dead host's socket reaches its end, and the relay with it, once what the host had sent is read: the
        // revisions it published before the kill are recorded before the restart is. A bound in case it never ends.
        if let relay {
            let bound = Task {
                try? await Task.sleep(for: .seconds(5))
                watcher?.close()
            }
            await relay.value
            bound.cancel()
        }
        watcher?.close()
        return written
    }

    /// The tree in the state file now (`{format, tree}`), or why it cannot be read: after a kill, what the next
    /// host restores.
    func stateFileTree() -> (tree: TreeSnapshot?, problem: String?) {
        do {
            let value = try JSONParser.parse(try FileSystem.readFile(statePath))
            guard let tree = value["tree"] else { return (nil, "\(statePath) holds no tree") }
            return (try Coding.decode(TreeSnapshot.self, from: tree), nil)
        } catch {
            return (nil, "cannot read \(statePath): \(error)")
        }
    }

    /// Stops the host: its stdin closes, and the script's end stops it with the shutdown ladder.
    func stop() async {
        let (process, client, watcher) = generation.withLock { state in
            state.killing = true
            defer {
                state.client = nil
                state.watcher = nil
            }
            return (state.process, state.client, state.watcher)
        }
        client?.close()
        watcher?.close()
        process?.closeStdin()
        if process?.waitForExit(milliseconds: 15_000) == nil {
            process?.signal(SIGKILL)
            _ = process?.waitForExit(milliseconds: 5_000)
        }
        generation.withLock { $0.events?.finish() }
    }

    /// Host exits the experiment did not cause, with when they were seen.
    var unexpectedExits: [(at: ContinuousClock.Instant, reason: String)] { generation.withLock { $0.unexpectedExits } }

    /// The lifetime a request was invoked in, for ``call(_:_:)``: set by the load around each request.
    @TaskLocal static var expectedLifetime: Int?

    /// The load's host lifetime now (0 before the first ``resume()``).
    var lifetime: Int { generation.withLock { $0.lifetime } }

    // MARK: - The disk

    /// Lowers the host's file-size limit to `bytes` (a state file never fits): a full disk for the host alone.
    /// Returns the soft limit to put back.
    func fillDisk(bytes: UInt64 = 64) -> UInt64? {
        guard let pid = generation.withLock({ $0.process?.pid }) else { return nil }
        let previous = try? ResourceLimits.get(.fileSize, of: pid).soft
        try? ResourceLimits.setSoft(.fileSize, of: pid, to: bytes)
        return previous
    }

    /// Puts the file-size limit back.
    func freeDisk(to soft: UInt64?) {
        guard let pid = generation.withLock({ $0.process?.pid }) else { return }
        try? ResourceLimits.setSoft(.fileSize, of: pid, to: soft ?? ResourceLimits.unlimited)
    }

    /// Returns once the experiment's monitor has recorded every event relayed so far (a marker through the same
    /// stream), so what the killed host published comes before the kill in the history. At most 5 s: a monitor that
    /// has stopped (a cancelled run) never reads the marker.
    func flushEvents() async {
        guard let events = generation.withLock({ $0.events }) else { return }
        let once = Once()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            once.set(continuation)
            if case .terminated = events.yield(.flushed { once.resume() }) { once.resume() }
            Task {
                try? await Task.sleep(for: .seconds(5))
                once.resume()
            }
        }
    }

    /// A continuation resumed by whichever comes first.
    private final class Once: Sendable {
        private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)
        func set(_ value: CheckedContinuation<Void, Never>) { continuation.withLock { $0 = value } }
        func resume() { continuation.withLock { $0.take() }?.resume() }
    }

    /// The host's word on its state file (`host/status`), nil while it is down.
    func stateFile() async -> HostStatusRequest.StateFile? {
        guard let client = generation.withLock({ $0.client }) else { return nil }
        return try? await client.call(HostStatusRequest.self, Empty()).stateFile
    }

    // MARK: - ExperimentHost

    func events(victim: String) -> AsyncStream<ExperimentEvent> {
        let (stream, continuation) = AsyncStream<ExperimentEvent>.makeStream(bufferingPolicy: .unbounded)
        generation.withLock {
            $0.events = continuation
            $0.victim = victim
        }
        return stream
    }

    /// The load's connection, or the typed error of a host that is down, or of a host that came back after the
    /// request was invoked (it belongs to the lifetime it was invoked in, which is gone).
    private func client() throws(ResponseError) -> AsyncControlClient {
        let (client, lifetime) = generation.withLock { ($0.client, $0.lifetime) }
        guard let client, Self.expectedLifetime.map({ $0 == lifetime }) ?? true else {
            throw ResponseError(
                .shuttingDown, "the host is down (the experiment killed it and is starting it again)",
                data: ["hostDown": true])
        }
        return client
    }

    /// A call through the load's connection. A call with no answer may have happened: one the host's kill cut off
    /// is marked `hostKilled` (the state file decides), any other `noAnswer` (a lost request).
    private func call<R: ControlRequest>(_ type: R.Type, _ params: R.Params) async throws(ResponseError) -> R.Result {
        let client = try client()
        do { return try await client.call(type, params) } catch {
            if case .response(let error) = error { throw error }
            let killed = generation.withLock { $0.killing || $0.client !== client }
            throw ResponseError(
                .internalError, "no answer: \(error)", data: killed ? ["hostKilled": true] : ["noAnswer": true])
        }
    }

    func status() async -> [HostStatusRequest.Plugin] {
        (try? await call(HostStatusRequest.self, Empty()))?.plugins ?? []
    }

    func snapshot() async -> TreeSnapshot {
        (try? await call(TreeGetRequest.self, Empty())) ?? TreeSnapshot(revision: 0, root: nil, instances: [])
    }

    func registry() async -> RouteRegistry {
        let plugins = (try? await call(HostPluginsRequest.self, Empty()))?.plugins ?? []
        return RouteRegistry(tables: plugins.map { ($0.name, $0.coordinators ?? []) })
    }

    func navigate(from instance: InstanceID?, _ steps: [NavigationStep]) async throws(ResponseError) -> UInt64 {
        try await call(NavigateRequest.self, .init(instance: instance, steps: steps)).revision
    }

    func open(_ url: String) async throws(ResponseError) -> UInt64 {
        try await call(OpenRequest.self, .init(url: url)).navigation.revision
    }

    func userAction(instance: InstanceID, entry: EntryID, action: String) async throws(ResponseError) -> UInt64 {
        try await call(UserActionRequest.self, .init(instance: instance, entry: entry, action: action)).revision
    }

    func userDismissed(instance: InstanceID, entry: EntryID) async throws(ResponseError) -> UInt64 {
        try await call(UserDismissedRequest.self, .init(instance: instance, entry: entry)).revision
    }

    func signal(plugin: String, _ signal: PluginSignalRequest.Signal) async {
        _ = try? await call(PluginSignalRequest.self, .init(plugin: plugin, signal: signal))
    }

    func setToxics(_ params: PluginToxicsRequest.Params) async {
        _ = try? await call(PluginToxicsRequest.self, params)
    }

    func setLimits(_ params: PluginLimitsRequest.Params) async {
        _ = try? await call(PluginLimitsRequest.self, params)
    }
}
