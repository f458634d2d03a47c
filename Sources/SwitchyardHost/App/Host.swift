import Glibc
import Logging
import SwitchyardNavigation
public import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// How to run a host (everything the manifest does not say).
public struct HostOptions: Sendable {
    /// Where `product` plugins are found. Default: next to the running executable.
    public var productsDirectory: String
    /// Per step of the shutdown ladder (stdin closed → SIGTERM → SIGKILL), in milliseconds.
    public var shutdownGraceMs: Int
    /// Stop gracefully on SIGINT and SIGTERM (the CLI sets this; in-process test hosts do not).
    public var handleSignals: Bool
    /// Where to listen for control clients (nil: no control socket).
    public var controlSocket: String?
    /// Where to keep the tree across host runs (nil: not kept).
    public var stateFile: String?
    /// Bounds on deep links and `navigate` chains from control clients and plugins (spec §6).
    public var requestLimits = RequestLimits.defaults
    /// Where to record every message between the host and its plugins (nil: no trace file). The caller owns it and
    /// closes it after the host has stopped, which writes what is still queued.
    public var trace: TraceWriter?

    /// Force one containment mechanism (nil: the strongest available, or `SWITCHYARD_CONTAINMENT` if set).
    public var containment: ContainmentMechanism?
    /// What carries each plugin when not a child process (the in-process test tier); nil: every plugin is a process.
    package var transports: PluginTransportFactory?
    /// Take fault injection from control clients (`plugin/signal`, `plugin/restart`; `switchyard run --allow-faults`).
    /// Off by default: any local client of this user could otherwise kill the app's plugins.
    public var allowFaults = false

    public init(
        productsDirectory: String = defaultProductsDirectory(), shutdownGraceMs: Int = 2_000,
        handleSignals: Bool = false,
        controlSocket: String? = nil, stateFile: String? = nil, containment: ContainmentMechanism? = nil
    ) {
        self.productsDirectory = productsDirectory
        self.shutdownGraceMs = shutdownGraceMs
        self.handleSignals = handleSignals
        self.controlSocket = controlSocket
        self.stateFile = stateFile
        self.containment = containment
    }
}

/// The control socket's default path for an app: `$XDG_RUNTIME_DIR/switchyard/APP.sock`, else
/// `/tmp/switchyard-UID/APP.sock` (the folder is created 0700).
public func defaultControlSocketPath(app: String) -> String {
    if let runtime = SystemProcess.environmentValue("XDG_RUNTIME_DIR"), !runtime.isEmpty,
        FileSystem.isDirectory(runtime)
    {
        return "\(runtime)/switchyard/\(app).sock"
    }
    return "/tmp/switchyard-\(SystemProcess.userID)/\(app).sock"
}

/// The whole host: an actor whose executor is its libuv loop.
///
/// Everything the host owns (the loop and its handles, the supervisors and their sessions, the navigator, the
/// control server) is a non-`Sendable` object in this actor's region, so the compiler keeps it on the loop's thread:
/// another thread reaches it only by awaiting the actor (``HostHandle``). The loop enters the actor's isolation where
/// libuv calls back into host code: the closures this actor hands its supervisors and its control server are
/// formed here, so they are isolated to it, and each request they receive becomes one task on the loop's executor.
actor Host: UVLoopActor {
    /// The loop as an executor: jobs for this actor run on the loop's thread, between libuv callbacks.
    nonisolated let executor: UVLoopExecutor

    let loop: UVLoop
    /// The app as the manifest describes it; a reload replaces it (spec §20.2).
    var manifest: Manifest
    let options: HostOptions
    let logger: Logger
    /// The supervisors, one per plugin the manifest names: what the navigator sees of the plugins.
    let plugins: PluginSupervisors
    private(set) var guardian: Guardian?
    private var control: ControlServer?
    private var signals: [UVSignal] = []
    private var keepAlive: UVTimer?
    private var startupWaiters: [CheckedContinuation<Void, Never>] = []
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    private(set) var startupComplete = false
    private var composing = false
    private(set) var stateStore: StateStore?
    /// The tree read from the state file, until composition decides whether it fits this app.
    private var loadedTree: NavigationTree?
    private(set) var shuttingDown = false
    /// The plugins are being stopped (``beginShutdown()`` ran).
    private var stopBegun = false
    /// The loop has closed: nothing may touch a handle any more (a call that raced the close is refused).
    private(set) var closed = false
    /// Why the app could not start (a fatal composition problem, or the root could not be created).
    private(set) var startupError: ResponseError?
    /// `plugin/start` requests waiting for their plugin to serve (or fail).
    var startWaiters: [String: [CheckedContinuation<Result<HostStatusRequest.Plugin, ResponseError>, Never>]] = [:]
    /// Plugins that did not serve when the tree was created or restored: the instances a state file held for them
    /// are restored when they first serve.
    var unrestored = Set<String>()
    /// Supervisors of plugins a reload removed, until their processes have ended (spec §20.2).
    var retiredSupervisors: [PluginSupervisor] = []
    /// A reload runs (one at a time).
    var reloading = false
    /// Plugins being stopped by `plugin/restart`, started again once stopped; and who waits for them to serve.
    var restartRequested = Set<String>()
    var restartWaiters: [String: [CheckedContinuation<Result<HostStatusRequest.Plugin, ResponseError>, Never>]] = [:]
    let navigator: Navigator
    /// The deep link waiting to be applied, its deadline timer and tree watch (Host+DeferredLinks.swift).
    var linkWaiting = LinkWaiting()
    /// The protocol trace: on with a trace file, at log level `trace`, or while a control client subscribes.
    let trace: ProtocolTrace

    init(loop: UVLoop, manifest: Manifest, options: HostOptions, logger: Logger) {
        self.executor = UVLoopExecutor(loop)
        self.loop = loop
        self.manifest = manifest
        self.options = options
        self.logger = logger
        self.navigator = Navigator(logger: logger)
        self.plugins = PluginSupervisors(order: manifest.plugins.map(\.name))
        self.trace = ProtocolTrace(file: options.trace, logs: logger.logLevel == .trace)
        navigator.requestLimits = options.requestLimits
        navigator.plugins = plugins
    }

    func supervisor(named name: String) -> PluginSupervisor? { plugins[name] }

    /// The host process's own facts for `host/status`.
    var facts: HostStatusRequest.Host {
        HostStatusRequest.Host(
            pid: SystemProcess.currentPID, maxLoopLagMs: loop.maxLagMilliseconds, stalledMs: loop.stalledMilliseconds)
    }

    // MARK: - The loop's life

    /// Starts the app and runs the loop until the host has stopped; called once, on the loop's thread (the loop's
    /// whole life runs in this actor's isolation). Returns the number of handles still open when the loop closed.
    func runLoop() -> Int {
        start()
        loop.run()
        closed = true
        let leaked = loop.close()
        // The closures this actor gave its parts capture it: let them go, so the host and its parts are freed.
        plugins.detach()
        navigator.detach()
        return leaked
    }

    /// Runs `work` as a task of its own on the loop: one per request or flow the loop's callbacks start.
    ///
    /// The loop is also the task's executor preference: a task resumed from a libuv callback (a plugin's answer
    /// completing a continuation) then goes straight back to the loop. Without it the resumption would pass through
    /// Swift's global pool on its way, which tests (and an embedding app) may have busy with blocking calls.
    func spawn(_ work: @escaping () async -> Void) {
        Task { await withTaskExecutorPreference(executor) { await work() } }
    }

    // MARK: - Start

    private func start() {
        do {
            let timer = try UVTimer(loop: loop)
            try timer.start(after: 1 << 40) {}
            keepAlive = timer
        } catch {
            logger.error("cannot create the keep-alive timer: \(error)")
        }
        if options.handleSignals { installSignalHandlers() }
        // Stalls are excluded from plugin deadlines (UVLoopClock); the log says they happened, since they are the
        // host's fault and worth knowing about.
        loop.onStall = { [logger] milliseconds in
            if milliseconds > 100 { logger.warning("host loop stalled \(milliseconds) ms") }
        }
        guardian = Guardian.start(
            loop: loop, productsDirectory: options.productsDirectory,
            requested: options.containment ?? Guardian.requestedByEnvironment(), ownsProcess: options.handleSignals,
            logger: logger)
        if let path = options.controlSocket {
            let server = ControlServer(loop: loop, path: path, navigator: navigator, trace: trace, logger: logger)
            server.onRequest = { session, id, method, params in
                self.spawn { await self.serveControl(session, id: id, method: method, params: params) }
            }
            do {
                try server.start()
                control = server
            } catch {
                // No plugin is started for an app that cannot be reached: the caller gets this error, once.
                startupError = error
                checkStartup()
                return
            }
        }

        if let path = options.stateFile {
            let store = StateStore(path: path, app: manifest.app, loop: loop, logger: logger)
            if case .tree(let tree) = store.load() { loadedTree = tree }
            stateStore = store
            navigator.observe { [navigator] event in
                guard case .treeChanged = event else { return }
                store.treeChanged(navigator.tree)
            }
        }

        let environment = SystemProcess.environment
        let directory = manifest.directory ?? FileSystem.currentDirectory
        for entry in manifest.plugins {
            do {
                let resolved = try entry.resolve(
                    manifestDirectory: directory, productsDirectory: options.productsDirectory,
                    hostEnvironment: environment)
                plugins.add(makeSupervisor(resolved))
            } catch {
                // `file:line:column: error: plugin 'p' cannot be started: …`, the one report of this failure.
                logger.error("\(error.diagnostics.first?.description ?? error.message)")
                let failure = ResponseError(
                    .pluginUnavailable, error.diagnostics.first?.description ?? error.message,
                    data: ["plugin": .string(entry.name)])
                plugins.addUnresolved(
                    PluginStatus(
                        name: entry.name, state: .failed, pid: nil, error: failure, restarts: 0, version: nil,
                        startupMicroseconds: nil))
            }
        }
        for supervisor in plugins.all { launch(supervisor) }
        checkStartup()
    }

    /// A supervisor for a resolved manifest entry, its events wired to this host.
    func makeSupervisor(_ resolved: ResolvedPlugin) -> PluginSupervisor {
        let supervisor = PluginSupervisor(
            plugin: resolved, loop: loop, logger: logger, trace: trace, guardian: guardian,
            transports: options.transports)
        if options.allowFaults { equipForFaults(supervisor) }
        supervisor.onStateChange = { supervisor in self.stateChanged(supervisor) }
        supervisor.onRequest = { supervisor, id, method, params in
            self.spawn { await self.servePlugin(supervisor, id: id, method: method, params: params) }
        }
        supervisor.onRestarted = { supervisor, session, done in
            self.spawn {
                await self.restoreRestarted(supervisor, via: session)
                done()
            }
        }
        wireLifecycle(supervisor)
        return supervisor
    }

    private func installSignalHandlers() {
        for number in [SIGINT, SIGTERM] {
            guard let watcher = try? UVSignal(loop: loop) else { continue }
            try? watcher.start(signal: number) { received in
                self.logger.notice("received \(signalName(received)); shutting down")
                self.beginShutdown()
            }
            signals.append(watcher)
        }
        // SIGHUP reads the manifest again (spec §20.2), as daemons do.
        if let watcher = try? UVSignal(loop: loop) {
            try? watcher.start(signal: SIGHUP) { _ in
                self.logger.notice("received SIGHUP; reloading the manifest")
                self.spawn {
                    do throws(ResponseError) { _ = try await self.reload(force: false) } catch {
                        self.logger.error("reload on SIGHUP refused: \(error.message)")
                    }
                }
            }
            signals.append(watcher)
        }
    }

    /// A restarted plugin's instances, re-created in its new process before it counts as ready.
    private func restoreRestarted(_ supervisor: PluginSupervisor, via session: PluginSession) async {
        if await restoreWoken(supervisor, via: session) { return }
        unrestored.remove(supervisor.name)
        let owned = navigator.tree.instances(of: supervisor.name).filter { !$0.isPending }.count
        let failures = await navigator.restore([(supervisor.name, session)])[supervisor.name] ?? []
        logger.notice("plugin '\(supervisor.name)' restored: \(owned - failures.count) of \(owned) instances")
    }

    private func stateChanged(_ supervisor: PluginSupervisor) {
        navigator.publish(.pluginChanged(supervisor.status))
        if !retiredSupervisors.isEmpty { retiredSupervisors.removeAll { !$0.hasLiveProcesses } }
        checkStartup()
        if shuttingDown { checkStopped() }
        guard startupComplete, startupError == nil, !shuttingDown else { return }
        switch supervisor.state {
        case .ready:
            spawn { await self.pluginServes(supervisor) }
        case .failed, .stopped:
            if restartRequested.remove(supervisor.name) != nil {
                spawn { self.answerRestartWaiters(supervisor.name, await self.startPlugin(supervisor.name)) }
            } else {
                answerStartWaiters(supervisor)
            }
        case .starting, .restarting, .stopping, .lazy, .hibernated: break
        }
    }

    private func checkStartup() {
        guard !startupComplete, !composing else { return }
        if let startupError {
            finishStartup(error: startupError)
            return
        }
        guard plugins.all.allSatisfy({ $0.state != .starting && $0.state != .restarting }) else { return }
        composing = true
        spawn { await self.compose() }
    }

    /// Once every plugin is ready or failed: compose their route tables and create the tree.
    private func compose() async {
        // A lazy plugin takes part through its contract (spec §20.3).
        let ready = plugins.all.filter { $0.state == .ready || $0.state == .lazy }
        let tables = ready.compactMap { supervisor in
            supervisor.routeTable.map { (plugin: supervisor.name, coordinators: $0.coordinators) }
        }
        let report = navigator.compose(tables: tables, declared: manifest.plugins.map(\.name), root: manifest.root)
        let errors = report.issues.filter { $0.severity == .error }
        if manifest.strict == true, let first = errors.first {
            finishStartup(
                error: ResponseError(
                    .compositionError, "the manifest is strict and the route tables do not compose: \(first)",
                    data: first.error.data))
            return
        }
        for plugin in report.excluded {
            let reasons = report.issues.filter { $0.plugin == plugin && $0.severity == .error }.map(\.description)
            plugins[plugin]?.fail(
                ResponseError(
                    .compositionError, "plugin '\(plugin)' was left out: \(reasons.joined(separator: "; "))",
                    data: ["plugin": .string(plugin), "issues": .array(reasons.map(JSONValue.string))]))
        }
        if let fatal = report.fatal {
            finishStartup(error: rootFailure(fatal))
            return
        }
        guard let root = manifest.root else {
            finishStartup(error: nil)
            return
        }
        if let loaded = loadedTree {
            loadedTree = nil
            if let problem = incompatibility(of: loaded, root: root) {
                _ = stateStore?.setAside(problem)
            } else if await restoreLoaded(loaded) {
                finishStartup(error: nil)
                return
            }
        }
        unrestored = Set(plugins.all.filter { $0.state != .ready }.map(\.name))
        do throws(ResponseError) {
            try await navigator.createRoot(CoordinatorReference(plugin: root.plugin, type: root.type))
            finishStartup(error: nil)
        } catch {
            finishStartup(
                error: ResponseError(error.code, "cannot create the root \(root): \(error.message)", data: error.data))
        }
    }

    /// The start-up error for a root that cannot be used. A root plugin that did not start is not a composition
    /// problem: its own failure (already logged where it happened, with its place in the manifest) is the cause, and
    /// the error says so once, as `pluginUnavailable`, instead of a `compositionError` about a plugin "not running".
    private func rootFailure(_ fatal: CompositionIssue) -> ResponseError {
        guard fatal.category == .root,
            let status = plugins.statuses.first(where: { $0.name == fatal.plugin }), status.state != .ready,
            let cause = status.error
        else { return fatal.error }
        let short = cause.message.split(separator: "\n").first.map(String.init) ?? cause.message
        return ResponseError(
            .pluginUnavailable, "the app's root plugin '\(fatal.plugin)' did not start: \(short)",
            data: ["plugin": .string(fatal.plugin), "cause": .string(cause.message)])
    }

    func finishStartup(error: ResponseError?) {
        guard !startupComplete else { return }
        startupComplete = true
        startupError = error
        let ready = plugins.all.filter { $0.state == .ready }.count
        if let error {
            // The caller of `HostHandle.start` gets the error and reports it; at error level it would be said twice.
            logger.debug("the app cannot start: \(error.message)")
        } else {
            logger.info("started: \(ready) of \(plugins.count) plugins ready, tree revision \(navigator.tree.revision)")
            settleLazyPlugins()
        }
        let waiters = startupWaiters
        startupWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Whether start-up is over (the tree exists, or the app could not start).
    var isStarted: Bool { startupComplete }

    /// Returns once every plugin is ready or has failed and the tree exists (or the app could not start).
    func waitUntilStarted() async {
        guard !startupComplete else { return }
        await withCheckedContinuation { startupWaiters.append($0) }
    }

    /// Waits for start-up; returns why the app could not start, if it could not.
    func startupOutcome() async -> ResponseError? {
        await waitUntilStarted()
        return startupError
    }

    // MARK: - Requests from plugins

    /// A request a plugin sent to the host (`navigate`, `tree/query`), served as one task on the loop.
    private func servePlugin(_ supervisor: PluginSupervisor, id: RequestID, method: String, params: JSONValue?) async {
        let session = supervisor.session
        do throws(ResponseError) {
            let result = try await navigator.serve(request: method, params: params, from: supervisor.name)
            session?.respond(to: id, encodedResult: result)
        } catch {
            session?.respond(to: id, error: error)
        }
    }

    // MARK: - Status

    var pluginStatuses: [PluginStatus] { plugins.statuses }

    /// The composed route tables.
    var registry: RouteRegistry { navigator.registry }

    /// Problems the composition check found.
    var compositionIssues: [CompositionIssue] { navigator.composition?.issues ?? [] }

    /// Which containment keeps the plugins' descendants from outliving the host.
    var containment: HostStatusRequest.Containment? { guardian?.status }

    /// Whether the tree reaches the state file (`host/status`), when there is one.
    var stateFileStatus: HostStatusRequest.StateFile? {
        guard let stateStore else { return nil }
        let health = stateStore.health
        return HostStatusRequest.StateFile(
            path: stateStore.path, writtenRevision: health.writtenRevision, failures: health.failures,
            error: health.error)
    }

    // MARK: - Stop

    /// Stops every plugin (shutdown ladder, in parallel), then releases the loop; returns once all have stopped.
    func shutdown() async {
        guard !closed else { return }
        await withCheckedContinuation { continuation in
            stopWaiters.append(continuation)
            beginShutdown()
        }
    }

    /// `host/shutdown`: what would change the tree is refused from now on, also a request read in the same pass; the
    /// plugins are stopped once the answer has been written.
    func shutdownAfterAnswer() {
        shuttingDown = true
        spawn { self.beginShutdown() }
    }

    /// Starts stopping the host (a signal, `host/shutdown`, or ``shutdown()``); nothing waits for it here.
    func beginShutdown() {
        shuttingDown = true
        guard !stopBegun else {
            checkStopped()
            return
        }
        stopBegun = true
        if !startupComplete { finishStartup(error: ResponseError(.shuttingDown, "the host is shutting down")) }
        let waiting = Array(startWaiters.values.joined()) + Array(restartWaiters.values.joined())
        startWaiters.removeAll()
        restartWaiters.removeAll()
        for waiter in waiting {
            waiter.resume(returning: .failure(ResponseError(.shuttingDown, "the host is shutting down")))
        }
        for supervisor in plugins.all { supervisor.stop(graceMs: options.shutdownGraceMs) }
        checkStopped()
    }

    func checkStopped() {
        guard stopBegun, !closed else { return }
        guard plugins.all.allSatisfy({ $0.state == .stopped || $0.state == .failed }),
            plugins.all.allSatisfy({ !$0.hasLiveProcesses }), retiredSupervisors.allSatisfy({ !$0.hasLiveProcesses })
        else { return }
        control?.stop()
        control = nil
        // An app that could not start has no tree worth keeping; the file keeps the last one that was.
        if startupError == nil { stateStore?.flush(navigator.tree) } else { stateStore?.discard() }
        stateStore = nil
        guardian?.close()
        for watcher in signals { watcher.close() }
        signals.removeAll()
        keepAlive?.close()
        keepAlive = nil
        closeLinkTimer()
        let waiters = stopWaiters
        stopWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }
}
