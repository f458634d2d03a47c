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
    /// Take fault injection from control clients (`plugin/signal`, `plugin/restart`; `switchyard run --allow-faults`).
    /// Off by default: any local client of this user could otherwise kill the app's plugins.
    public var allowFaults = false

    public init(
        productsDirectory: String = defaultProductsDirectory(), shutdownGraceMs: Int = 2_000, handleSignals: Bool = false,
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
    if let runtime = SystemProcess.environmentValue("XDG_RUNTIME_DIR"), !runtime.isEmpty, FileSystem.isDirectory(runtime) {
        return "\(runtime)/switchyard/\(app).sock"
    }
    return "/tmp/switchyard-\(SystemProcess.userID)/\(app).sock"
}

/// The whole host state, confined to the loop thread: plugins, their supervisors, the guardian.
///
/// - Important: Loop thread only. Other threads go through ``HostHandle``.
final class Host {
    let loop: UVLoop
    let manifest: Manifest
    let options: HostOptions
    let logger: Logger
    private(set) var supervisors: [PluginSupervisor] = []
    private(set) var supervisorsByName: [String: PluginSupervisor] = [:]
    private var unresolved: [PluginStatus] = []
    private(set) var guardian: Guardian?
    private var control: ControlServer?
    private var signals: [UVSignal] = []
    private var keepAlive: UVTimer?
    private var startupWaiters: [() -> Void] = []
    private var stopWaiters: [() -> Void] = []
    private(set) var startupComplete = false
    private var composing = false
    private(set) var stateStore: StateStore?
    /// The tree read from the state file, until composition decides whether it fits this app.
    private var loadedTree: NavigationTree?
    private(set) var shuttingDown = false
    /// Why the app could not start (a fatal composition problem, or the root could not be created).
    private(set) var startupError: ResponseError?
    /// `plugin/start` requests waiting for their plugin to serve (or fail).
    var startWaiters: [String: [(Result<HostStatusRequest.Plugin, ResponseError>) -> Void]] = [:]
    /// Plugins that did not serve when the tree was created or restored: the instances a state file held for them
    /// are restored when they first serve.
    var unrestored = Set<String>()
    /// Plugins being stopped by `plugin/restart`, started again once stopped; and who waits for them to serve.
    var restartRequested = Set<String>()
    var restartWaiters: [String: [(Result<HostStatusRequest.Plugin, ResponseError>) -> Void]] = [:]
    let navigator: Navigator
    /// The protocol trace: on with a trace file, at log level `trace`, or while a control client subscribes.
    let trace: ProtocolTrace

    init(loop: UVLoop, manifest: Manifest, options: HostOptions, logger: Logger) {
        self.loop = loop
        self.manifest = manifest
        self.options = options
        self.logger = logger
        self.navigator = Navigator(logger: logger)
        self.trace = ProtocolTrace(file: options.trace, logs: logger.logLevel == .trace)
        navigator.requestLimits = options.requestLimits
        navigator.plugins = self
    }

    func supervisor(named name: String) -> PluginSupervisor? { supervisorsByName[name] }

    /// The host process's own facts for `host/status`.
    var facts: HostStatusRequest.Host {
        HostStatusRequest.Host(
            pid: SystemProcess.currentPID, maxLoopLagMs: loop.maxLagMilliseconds, stalledMs: loop.stalledMilliseconds)
    }

    // MARK: - Start

    func start() {
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
            let server = ControlServer(host: self, path: path, logger: logger)
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
            _ = navigator.observe { [weak self] event in
                guard let self, case .treeChanged = event else { return }
                self.stateStore?.treeChanged(self.navigator.tree)
            }
        }

        let environment = SystemProcess.environment
        let directory = manifest.directory ?? FileSystem.currentDirectory
        for entry in manifest.plugins {
            do {
                let resolved = try entry.resolve(
                    manifestDirectory: directory, productsDirectory: options.productsDirectory,
                    hostEnvironment: environment)
                let supervisor = PluginSupervisor(plugin: resolved, loop: loop, logger: logger, trace: trace, guardian: guardian)
                supervisor.onStateChange = { [weak self] supervisor in self?.stateChanged(supervisor) }
                supervisor.onRequest = { [weak self] supervisor, id, method, params in
                    self?.pluginRequest(from: supervisor, id: id, method: method, params: params)
                }
                supervisor.onRestarted = { [weak self] supervisor, connection, done in
                    guard let self else { return done() }
                    self.unrestored.remove(supervisor.name)
                    let owned = self.navigator.tree.instances(of: supervisor.name).filter { !$0.isPending }.count
                    self.navigator.restore(plugin: supervisor.name, via: connection) { failures in
                        self.logger.notice("plugin '\(supervisor.name)' restored: \(owned - failures.count) of \(owned) instances")
                        done()
                    }
                }
                supervisors.append(supervisor)
                supervisorsByName[entry.name] = supervisor
            } catch {
                let failure = ResponseError.pluginUnavailable(entry.name, error.message)
                logger.error("\(failure.message)")
                unresolved.append(
                    PluginStatus(
                        name: entry.name, state: .failed, pid: nil, error: failure, restarts: 0, version: nil,
                        startupMicroseconds: nil))
            }
        }
        for supervisor in supervisors { supervisor.start() }
        checkStartup()
    }

    private func installSignalHandlers() {
        for number in [SIGINT, SIGTERM] {
            guard let watcher = try? UVSignal(loop: loop) else { continue }
            try? watcher.start(signal: number) { [weak self] received in
                guard let self else { return }
                self.logger.notice("received \(signalName(received)); shutting down")
                self.shutdown {}
            }
            signals.append(watcher)
        }
    }

    /// A request a plugin sent to the host.
    private func pluginRequest(from supervisor: PluginSupervisor, id: RequestID, method: String, params: JSONValue?) {
        let connection = supervisor.connection
        navigator.handle(request: method, params: params, from: supervisor.name) { result in
            switch result {
            case .success(let value): connection?.respond(to: id, result: value)
            case .failure(let error): connection?.respond(to: id, error: error)
            }
        }
    }

    private func stateChanged(_ supervisor: PluginSupervisor) {
        navigator.publish(.pluginChanged(supervisor.status))
        checkStartup()
        if shuttingDown { checkStopped() }
        guard startupComplete, startupError == nil, !shuttingDown else { return }
        switch supervisor.state {
        case .ready: pluginServes(supervisor)
        case .failed, .stopped:
            if restartRequested.remove(supervisor.name) != nil {
                startPlugin(supervisor.name) { [weak self] result in self?.answerRestartWaiters(supervisor.name, result) }
            } else {
                answerStartWaiters(supervisor)
            }
        case .starting, .restarting, .stopping: break
        }
    }

    private func checkStartup() {
        guard !startupComplete, !composing else { return }
        if let startupError {
            finishStartup(error: startupError)
            return
        }
        guard supervisors.allSatisfy({ $0.state != .starting && $0.state != .restarting }) else { return }
        composing = true
        compose()
    }

    /// Once every plugin is ready or failed: compose their route tables and create the tree.
    private func compose() {
        let ready = supervisors.filter { $0.state == .ready }
        let tables = ready.compactMap { supervisor in supervisor.routeTable.map { (plugin: supervisor.name, coordinators: $0.coordinators) } }
        let report = navigator.compose(tables: tables, declared: manifest.plugins.map(\.name), root: manifest.root)
        let errors = report.issues.filter { $0.severity == .error }
        if manifest.strict == true, let first = errors.first {
            finishStartup(error: ResponseError(.compositionError, "the manifest is strict and the route tables do not compose: \(first)", data: first.error.data))
            return
        }
        for plugin in report.excluded {
            let reasons = report.issues.filter { $0.plugin == plugin && $0.severity == .error }.map(\.description)
            supervisorsByName[plugin]?.fail(ResponseError(
                .compositionError, "plugin '\(plugin)' was left out: \(reasons.joined(separator: "; "))",
                data: ["plugin": .string(plugin), "issues": .array(reasons.map(JSONValue.string))]))
        }
        if let fatal = report.fatal {
            finishStartup(error: fatal.error)
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
            } else if restoreLoaded(loaded) {
                return
            }
        }
        unrestored = Set(supervisors.filter { $0.state != .ready }.map(\.name))
        navigator.createRoot(CoordinatorReference(plugin: root.plugin, type: root.type)) { [weak self] result in
            if case .failure(let error) = result {
                self?.finishStartup(error: ResponseError(error.code, "cannot create the root \(root): \(error.message)", data: error.data))
            } else {
                self?.finishStartup(error: nil)
            }
        }
    }

    func finishStartup(error: ResponseError?) {
        guard !startupComplete else { return }
        startupComplete = true
        startupError = error
        let ready = supervisors.filter { $0.state == .ready }.count
        if let error {
            // The caller of `HostHandle.start` gets the error and reports it; at error level it would be said twice.
            logger.debug("the app cannot start: \(error.message)")
        } else {
            logger.info("started: \(ready) of \(supervisors.count + unresolved.count) plugins ready, tree revision \(navigator.tree.revision)")
        }
        let waiters = startupWaiters
        startupWaiters.removeAll()
        for waiter in waiters { waiter() }
    }

    /// Whether start-up is over (the tree exists, or the app could not start).
    var isStarted: Bool { startupComplete }

    /// Runs `body` once every plugin is ready or has failed.
    func whenStarted(_ body: @escaping () -> Void) {
        if startupComplete { body() } else { startupWaiters.append(body) }
    }

    // MARK: - Status

    var pluginStatuses: [PluginStatus] {
        let running = supervisors.map(\.status)
        let names = manifest.plugins.map(\.name)
        let all = running + unresolved
        return names.compactMap { name in all.first { $0.name == name } }
    }

    // MARK: - Stop

    /// Stops every plugin (shutdown ladder, in parallel), then releases the loop.
    func shutdown(_ completion: @escaping () -> Void) {
        stopWaiters.append(completion)
        guard !shuttingDown else {
            checkStopped()
            return
        }
        shuttingDown = true
        if !startupComplete { finishStartup(error: ResponseError(.shuttingDown, "the host is shutting down")) }
        let waiting = Array(startWaiters.values.joined()) + Array(restartWaiters.values.joined())
        startWaiters.removeAll()
        restartWaiters.removeAll()
        for waiter in waiting { waiter(.failure(ResponseError(.shuttingDown, "the host is shutting down"))) }
        for supervisor in supervisors { supervisor.stop(graceMs: options.shutdownGraceMs) }
        checkStopped()
    }

    private func checkStopped() {
        guard shuttingDown else { return }
        guard supervisors.allSatisfy({ $0.state == .stopped || $0.state == .failed }),
            supervisors.allSatisfy({ $0.connection == nil || $0.connection?.state == .terminated })
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
        let waiters = stopWaiters
        stopWaiters.removeAll()
        for waiter in waiters { waiter() }
    }
}

extension Host: PluginDirectory {
    func connection(_ plugin: String) -> PluginConnection? {
        guard let supervisor = supervisorsByName[plugin], supervisor.state == .ready,
            let connection = supervisor.connection, connection.state == .ready
        else { return nil }
        return connection
    }

    func availability(of plugin: String) -> (status: InstanceSnapshot.Status, reason: String?) {
        guard let supervisor = supervisorsByName[plugin] else { return (.unavailable, "plugin '\(plugin)' is not running") }
        if supervisor.state == .ready { return (.ok, nil) }
        return (.unavailable, supervisor.lastError?.message ?? "plugin '\(plugin)' is \(supervisor.state)")
    }

    var unavailablePlugins: [String: String?] {
        var result: [String: String?] = [:]
        for (name, supervisor) in supervisorsByName where supervisor.state != .ready {
            result[name] = supervisor.lastError?.message ?? "plugin '\(name)' is \(supervisor.state)"
        }
        return result
    }

    func incarnation(of plugin: String) -> Int { supervisorsByName[plugin]?.incarnation ?? 0 }

    func maxInstances(of plugin: String) -> Int { supervisorsByName[plugin]?.plugin.limits.maxInstances ?? .max }
}
