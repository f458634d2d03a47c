import InProcessDemo
import SwitchyardPluginTesting
import Logging
package import SwitchyardClient
package import SwitchyardHost
package import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import SwitchyardUV
import Synchronization
import Testing

/// Captured log lines of a test host.
package final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])
    /// `UVLoop.hrtime` when each line was logged: on the thread that logged it, so a host's verdict is timed by
    /// the host, not by when a test task got to look.
    private let times = Mutex<[UInt64]>([])
    private let changes = ChangeNotifier()

    package init() {}

    package func append(_ line: String) {
        let now = UVLoop.hrtime
        lines.withLock { lines in
            lines.append(line)
            times.withLock { $0.append(now) }
        }
        changes.notify()
    }

    /// When the first line containing `text` was logged (`UVLoop.hrtime`), if one was.
    package func time(of text: String) -> UInt64? {
        lines.withLock { lines in
            guard let index = lines.firstIndex(where: { $0.contains(text) }) else { return nil }
            return times.withLock { $0[index] }
        }
    }

    /// Waits (on the log event itself, not by polling) until a line containing `text` has been logged.
    package func waitFor(_ text: String, seconds: Double = defaultTimeout) async throws {
        try await changes.wait("log line containing '\(text)'", seconds: seconds) { self.contains(text) }
    }
    /// Waits until at least `count` lines containing `text` have been logged.
    package func waitFor(_ text: String, count: Int, seconds: Double = defaultTimeout) async throws {
        try await changes.wait("\(count) log lines containing '\(text)'", seconds: seconds) {
            self.lines.withLock { $0.count(where: { $0.contains(text) }) } >= count
        }
    }
    package var all: [String] { lines.withLock { $0 } }
    package func contains(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
}

/// Plugin manifest entries for the plugins this package builds.
package enum TestPlugins {
    package static func swiftHello(_ name: String = "hello-swift") -> PluginManifest {
        PluginManifest(name: name, product: "HelloPlugin")
    }

    package static func pythonHello(_ name: String = "hello-python") -> PluginManifest {
        PluginManifest(name: name, command: [python, "\(packageRoot)/Plugins/python/hello.py"])
    }

    package static func misbehave(
        _ name: String, _ arguments: [String], startTimeoutMs: Int? = nil, limits: LimitOverrides? = nil
    ) -> PluginManifest {
        PluginManifest(
            name: name, product: "misbehave", args: ["--name", name] + arguments, limits: limits,
            startTimeoutMs: startTimeoutMs)
    }

    /// The real Python interpreter (not a pyenv shim, which costs ~50 ms per spawn).
    package static let python: String = {
        for candidate in [
            SystemProcess.environmentValue("SWITCHYARD_PYTHON"), "/root/.pyenv/versions/3.11.7/bin/python3",
            "/usr/bin/python3", "/usr/local/bin/python3",
        ] {
            if let candidate, FileSystem.isExecutable(candidate) { return candidate }
        }
        return FileSystem.findExecutable("python3", path: SystemProcess.environmentValue("PATH")) ?? "python3"
    }()
}

/// Where a test's plugins run: the same test body runs both ways (Hummingbird's `.router`/`.live`, sourcekit-lsp's
/// `LocalConnection`), so what it checks is the host's behaviour, not an accident of one of them.
package enum Tier: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Each plugin a Swift `Plugin` inside the test process (``InProcessTransport``): no process, no pipe; the demo's
    /// Python and Node plugins are played by their Swift stand-ins (`InProcessDemo`).
    case inProcess
    /// Each plugin its own process, spawned by the host through real pipes.
    case processes

    package var testDescription: String { rawValue }

    /// The tiers a tiered test runs in: both, or those `SWITCHYARD_TIERS` names (`inProcess`, `processes`, comma
    /// separated), to time or debug one of them.
    package static let selected: [Tier] = {
        guard let names = SystemProcess.environmentValue("SWITCHYARD_TIERS") else { return allCases }
        let chosen = names.split(separator: ",").compactMap { Tier(rawValue: String($0)) }
        return chosen.isEmpty ? allCases : chosen
    }()
}

/// Runs `body` against a real host — its plugins in processes, or in this process (`tier`) — then shuts it down and
/// checks that no plugin process survived.
package func withHost<T: Sendable>(
    _ plugins: [PluginManifest], tier: Tier = .processes, root: CoordinatorReference? = nil,
    options: HostOptions? = nil,
    logs: LogCapture = LogCapture(), _ body: @Sendable (HostHandle) async throws -> T
) async throws -> T {
    try await withHost(
        manifest: Manifest(app: "test", root: root, plugins: plugins, directory: packageRoot), tier: tier,
        options: options, logs: logs, body)
}

/// ``withHost(_:tier:root:options:logs:_:)`` for a manifest of its own (one loaded from a file, which a reload reads
/// again).
package func withHost<T: Sendable>(
    manifest: Manifest, tier: Tier = .processes, options: HostOptions? = nil, logs: LogCapture = LogCapture(),
    _ body: @Sendable (HostHandle) async throws -> T
) async throws -> T {
    TestSweep.once()
    var configured = options ?? HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
    configured.productsDirectory = productsDirectory
    if tier == .inProcess {
        let unknown = manifest.plugins.map(\.name).filter { InProcessDemo.plugins[$0] == nil }
        guard unknown.isEmpty else {
            throw TestFailure("no in-process stand-in for \(unknown): this test runs only as processes")
        }
        configured.runInProcess(InProcessDemo.plugins)
    }
    let options = configured
    let logger = Logger(label: "test-host") { label in
        SwitchyardLogHandler(label: label, level: .debug) { line in logs.append(line) }
    }
    // Say what the host was doing: its last distinct log lines (a flood repeats one line many times).
    func explained(_ error: any Error) -> TestFailure {
        var recent: [String] = []
        for line in logs.all.reversed() where recent.count < 40 && recent.last != line {
            recent.append(String(line.prefix(300)))
        }
        return TestFailure("\(error); the host's last log lines:\n" + recent.reversed().joined(separator: "\n"))
    }
    // Starting spawns every plugin and waits for each handshake: beside a busy loop and other heavy suites it once
    // took more than the 20 s of a single wait, so it gets two: still under a one-minute suite limit, so a start that
    // never ends fails here, with the host's log, rather than at the time limit with nothing.
    let host: HostHandle
    do {
        host = try await withDeadline(seconds: 2 * defaultTimeout, "host start") {
            try await HostHandle.start(manifest: manifest, options: options, logger: logger)
        }
    } catch { throw explained(error) }
    let pids = await host.status().compactMap(\.pid)
    let result: Result<T, any Error>
    do { result = .success(try await body(host)) } catch { result = .failure(error) }
    do {
        try await withDeadline(seconds: defaultTimeout, "host shutdown") { await host.shutdown() }
    } catch {
        throw explained(error)
    }
    #expect(host.handlesLeftOpen == 0, "the host's loop closed with handles still open")
    let all = pids + (await host.status().compactMap(\.pid))
    for pid in Set(all) {
        #expect(SystemProcess.waitForExit(pid, milliseconds: 5_000), "plugin process \(pid) outlived the host")
    }
    return try result.get()
}

/// Runs `body` against a real host (as ``withHost``) listening on a control socket in a fresh temporary folder,
/// with the socket's path (for tests that open several clients of their own).
package func withControlSocket<T: Sendable>(
    _ plugins: [PluginManifest], tier: Tier = .processes, root: CoordinatorReference? = nil, allowFaults: Bool = false,
    _ body: @Sendable (HostHandle, _ path: String) async throws -> T
) async throws -> T {
    let path = try TestSweep.temporaryDirectory() + "/control.sock"
    var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
    options.controlSocket = path
    options.allowFaults = allowFaults
    return try await withHost(plugins, tier: tier, root: root, options: options) { host in try await body(host, path) }
}

/// Runs `body` against a real host listening on a control socket (``withControlSocket``), with a client of it.
package func withControlHost<T: Sendable>(
    _ plugins: [PluginManifest], tier: Tier = .processes, root: CoordinatorReference? = nil, allowFaults: Bool = false,
    _ body: @Sendable (HostHandle, AsyncControlClient) async throws -> T
) async throws -> T {
    try await withControlSocket(plugins, tier: tier, root: root, allowFaults: allowFaults) { host, path in
        try await body(host, try AsyncControlClient(path: path, timeoutMilliseconds: 20_000))
    }
}

extension TestPlugins {
    /// The demo app (Plugins/demo/switchyard.json) with real interpreter paths: Swift main, authenticated and
    /// todos; Python unauthenticated and profile; Node projects.
    package static func demo(mainArguments: [String] = [], extra: [PluginManifest] = []) -> [PluginManifest] {
        [
            PluginManifest(name: "main", product: "DemoMain", args: mainArguments),
            PluginManifest(
                name: "unauthenticated", command: [python, "\(packageRoot)/Plugins/python/unauthenticated.py"]),
            PluginManifest(name: "authenticated", product: "DemoAuthenticated"),
            PluginManifest(name: "todos", product: "DemoTodos"),
            PluginManifest(name: "projects", command: [node, "\(packageRoot)/Plugins/node/projects.js"]),
            PluginManifest(name: "profile", command: [python, "\(packageRoot)/Plugins/python/profile.py"]),
        ] + extra
    }

    package static let demoRoot = CoordinatorReference(plugin: "main", type: "main")

    package static let node: String =
        FileSystem.findExecutable("node", path: SystemProcess.environmentValue("PATH")) ?? "/usr/bin/node"
}

/// Collects a host's events so a test can wait for one (on the event itself, with a deadline).
package final class EventLog: Sendable {
    private final class Storage: Sendable {
        let events = Mutex<[HostEvent]>([])
        let changes = ChangeNotifier()
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    package init(_ host: HostHandle) {
        let stream = host.events()
        let storage = self.storage
        task = Task {
            for await event in stream {
                storage.events.withLock { $0.append(event) }
                storage.changes.notify()
            }
        }
    }

    deinit { task.cancel() }

    package var all: [HostEvent] { storage.events.withLock { $0 } }

    package var treeRevisions: [UInt64] {
        all.compactMap { if case .treeChanged(let change) = $0 { change.revision } else { nil } }
    }

    package var destroyed: [(plugin: String, instance: InstanceID)] {
        all.compactMap { if case .destroyed(let plugin, let instance, _) = $0 { (plugin, instance) } else { nil } }
    }

    /// Waits until `condition` holds for the events collected so far.
    package func wait(
        for what: String, seconds: Double = defaultTimeout, until condition: @Sendable @escaping ([HostEvent]) -> Bool
    ) async throws {
        try await storage.changes.wait(what, seconds: seconds) { condition(self.all) }
    }

    /// Waits until `condition` holds for every plugin's latest status: the host's statuses when called, updated by
    /// each `pluginChanged` since (this log subscribed first, so nothing falls between the two).
    package func waitForPlugins(
        _ host: HostHandle, _ what: String, seconds: Double = defaultTimeout,
        until condition: @Sendable @escaping ([String: PluginStatus]) -> Bool
    ) async throws {
        let initial = await host.status()
        try await wait(for: what, seconds: seconds) { events in
            var latest = Dictionary(initial.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
            for case .pluginChanged(let status) in events { latest[status.name] = status }
            return condition(latest)
        }
    }

    /// Waits until `plugin` is ready after at least `restarts` restarts.
    package func waitUntilReady(
        _ host: HostHandle, _ plugin: String, restarts: Int, seconds: Double = defaultTimeout
    ) async throws {
        do {
            try await waitForPlugins(host, "\(plugin) ready after \(restarts) restart(s)", seconds: seconds) { latest in
                guard let status = latest[plugin] else { return false }
                return status.state == .ready && status.restarts >= restarts
            }
        } catch {
            // Where it stopped is what tells a slow machine from a plugin given up.
            let status = await host.status().first { $0.name == plugin }
            let now = status.map { "\($0.state) after \($0.restarts) restart(s), error \($0.error?.message ?? "none")" }
            throw TestFailure("\(error); it is \(now ?? "not running")")
        }
    }
}
