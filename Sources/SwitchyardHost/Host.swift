import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardUV

/// How to run a host (everything the manifest does not say).
public struct HostOptions: Sendable {
    /// Where `product` plugins are found. Default: next to the running executable.
    public var productsDirectory: String
    /// Per step of the shutdown ladder (stdin closed → SIGTERM → SIGKILL), in milliseconds.
    public var shutdownGraceMs: Int
    /// Stop gracefully on SIGINT and SIGTERM (the CLI sets this; in-process test hosts do not).
    public var handleSignals: Bool

    public init(productsDirectory: String = defaultProductsDirectory(), shutdownGraceMs: Int = 2_000, handleSignals: Bool = false) {
        self.productsDirectory = productsDirectory
        self.shutdownGraceMs = shutdownGraceMs
        self.handleSignals = handleSignals
    }
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
    private var supervisorsByName: [String: PluginSupervisor] = [:]
    private var unresolved: [PluginStatus] = []
    private var guardian: Guardian?
    private var signals: [UVSignal] = []
    private var keepAlive: UVTimer?
    private var startupWaiters: [() -> Void] = []
    private var stopWaiters: [() -> Void] = []
    private var startupComplete = false
    private(set) var shuttingDown = false

    init(loop: UVLoop, manifest: Manifest, options: HostOptions, logger: Logger) {
        self.loop = loop
        self.manifest = manifest
        self.options = options
        self.logger = logger
    }

    func supervisor(named name: String) -> PluginSupervisor? { supervisorsByName[name] }

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
        guardian = Guardian.start(loop: loop, productsDirectory: options.productsDirectory, logger: logger)

        let environment = SystemProcess.environment
        let directory = manifest.directory ?? FileSystem.currentDirectory
        for entry in manifest.plugins {
            do {
                let resolved = try entry.resolve(
                    manifestDirectory: directory, productsDirectory: options.productsDirectory,
                    hostEnvironment: environment)
                let supervisor = PluginSupervisor(plugin: resolved, loop: loop, logger: logger, guardian: guardian)
                supervisor.onStateChange = { [weak self] supervisor in self?.stateChanged(supervisor) }
                supervisor.onRequest = { [weak self] supervisor, id, method, params in
                    self?.pluginRequest(from: supervisor, id: id, method: method, params: params)
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
        supervisor.connection?.respond(to: id, error: .methodNotFound(method))
    }

    private func stateChanged(_ supervisor: PluginSupervisor) {
        checkStartup()
        if shuttingDown { checkStopped() }
    }

    private func checkStartup() {
        guard !startupComplete else { return }
        guard supervisors.allSatisfy({ $0.state != .starting }) else { return }
        startupComplete = true
        let ready = supervisors.filter { $0.state == .ready }.count
        logger.info("started: \(ready) of \(supervisors.count + unresolved.count) plugins ready")
        let waiters = startupWaiters
        startupWaiters.removeAll()
        for waiter in waiters { waiter() }
    }

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
        for waiter in startupWaiters { waiter() }
        startupWaiters.removeAll()
        for supervisor in supervisors { supervisor.stop(graceMs: options.shutdownGraceMs) }
        checkStopped()
    }

    private func checkStopped() {
        guard shuttingDown else { return }
        guard supervisors.allSatisfy({ $0.state == .stopped || $0.state == .failed }),
            supervisors.allSatisfy({ $0.connection == nil || $0.connection?.state == .terminated })
        else { return }
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
