import Glibc
import Logging
import SwitchyardClient
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV
import Synchronization

/// The measures, one method per section of the report. Runs on the main actor; the host runs on its own thread.
@MainActor
final class Bench {
    let options: Options
    let products: String
    let logger: Logger
    /// The protocol trace every host records to, when measuring its cost (`--trace`).
    let trace: TraceWriter?
    /// The last unpinned run's `$/ping` samples, for the latency picture.
    private(set) var pictureSamples: (switchyard: [UInt64], floor: [UInt64])?
    /// The echo floor's p50 and p99 (ns), reused by composite floors.
    private var echoP50 = Double.nan
    private var echoP99 = Double.nan

    init(options: Options, products: String, logger: Logger, trace: TraceWriter?) {
        self.options = options
        self.products = products
        self.logger = logger
        self.trace = trace
    }

    var warmup: Int { max(10, options.count / 20) }
    var directory: String { FileSystem.currentDirectory }

    func startHost(_ plugins: [PluginManifest], root: CoordinatorReference? = nil) async throws -> HostHandle {
        let manifest = Manifest(app: "bench", root: root, plugins: plugins, directory: directory)
        var hostOptions = HostOptions(productsDirectory: products)
        hostOptions.trace = trace
        return try await HostHandle.start(manifest: manifest, options: hostOptions, logger: logger)
    }

    static let benchRoot = CoordinatorReference(plugin: "bench", type: "bench")
    static let routeParams: JSONValue = [
        "instance": 1, "type": "bench", "route": "item", "transition": "push", "params": ["id": "42"],
    ]
    /// ``routeParams`` as the navigator sends it.
    static let routeRequest = CoordinatorRouteRequest.Params(
        instance: InstanceID(1), type: "bench", route: "item", transition: .push, params: ["id": "42"])
    static let pingLine = Message.request(id: .number(123_456), method: PingRequest.method, params: [:]).encodedLine()
    static let routeLine = Message.request(
        id: .number(123_456), method: CoordinatorRouteRequest.method, params: routeParams
    ).encodedLine()

    func trimmed(_ samples: [UInt64]) -> [UInt64] { Array(samples.dropFirst(warmup)).sorted() }

    // MARK: - The hop

    /// Round trips host ↔ plugin against the echo floor; pinned, also the host's own cost against a C libuv host.
    /// `pair`: the host (this process) on CPU 0, the plugin and the echo child on CPU 1, the floor and Switchyard alike.
    func hops(pinned: Bool, pair: Bool = false) async throws -> [Row] {
        let section =
            pair
            ? "Hop, host on CPU 0 and plugin or echo on CPU 1 (the same placement for floor and Switchyard)"
            : pinned
                ? "Hop, pinned to one CPU (software cost)" : "Hop host ↔ plugin, unpinned (what a deployed host sees)"
        StandardError.write("\(section)…\n")
        let placement: Placement = pair ? .pair : .unpinned
        if pair { try placement.placeThisProcess() }
        defer { if pair { try? Placement.unpinned.placeThisProcess() } }
        let host = try await startHost(
            [
                PluginManifest(name: "bench", command: placement.child(["\(products)/BenchPlugin"])),
                PluginManifest(name: "c", product: "switchyard-c-plugin"),
            ],
            root: Self.benchRoot)
        defer { Task { await host.shutdown() } }
        let echo = placement.child(["\(products)/switchyard-echo"])
        // Each run in blocks, floor and Switchyard alternating block by block, so both see the same machine state
        // (a scheduler's placement, a neighbour's load) within a run too, not only run by run.
        let blocks = options.quick ? 1 : 5
        let block = options.count / blocks + warmup
        let total = options.count + warmup
        var values: [String: [Double]] = [:]
        func keep(_ key: String, _ sorted: [UInt64]) {
            values[key + ".p50", default: []].append(percentile(sorted, 0.5) / 1_000)
            values[key + ".p99", default: []].append(percentile(sorted, 0.99) / 1_000)
        }
        for run in 1...options.runs {
            var floorPing: [UInt64] = [], ping: [UInt64] = [], floorRoute: [UInt64] = [], route: [UInt64] = []
            for _ in 0..<blocks {
                floorPing += trimmed(try await echoRoundTrips(Self.pingLine, count: block, echo: echo))
                ping += trimmed(try await host.pingSeries("bench", count: block))
                floorRoute += trimmed(try await echoRoundTrips(Self.routeLine, count: block, echo: echo))
                route += trimmed(try await host.routeSeries("bench", Self.routeRequest, count: block))
            }
            floorPing.sort()
            ping.sort()
            floorRoute.sort()
            route.sort()
            keep("floorPing", floorPing)
            keep("ping", ping)
            keep("floorRoute", floorRoute)
            keep("route", route)
            if pinned {
                keep(
                    "cHost",
                    trimmed(
                        try cHostRoundTrips(
                            host: "\(products)/switchyard-c-host", plugin: "\(products)/switchyard-c-plugin",
                            count: total)))
                keep("hostC", trimmed(try await host.pingSeries("c", count: total)))
            } else if !pair {
                pictureSamples = (ping, floorPing)
            }
            StandardError.write(
                "  run \(run): $/ping p50 \(format(percentile(ping, 0.5) / 1_000)) µs (echo \(format(percentile(floorPing, 0.5) / 1_000)) µs), route p50 \(format(percentile(route, 0.5) / 1_000)) µs\n"
            )
        }
        func value(_ key: String) -> Double { median(values[key] ?? []) }
        if !pinned && !pair {
            echoP50 = value("floorPing.p50")
            echoP99 = value("floorPing.p99")
        }
        func row(
            _ measure: String, _ key: String, _ floorKey: String, _ floorName: String, target: String?, limit: Double?
        ) -> Row {
            var row = Row(
                section: section, measure: measure, unit: "µs", switchyard: value(key), floor: value(floorKey),
                floorName: floorName, target: target)
            row.spread = ratioSpread(values[key] ?? [], values[floorKey] ?? [])
            if let limit { row.met = row.ratio <= limit }
            return row
        }
        var rows = [
            row(
                "`$/ping` round trip p50, host ↔ Swift plugin", "ping.p50", "floorPing.p50", "C echo",
                target: pinned || pair ? nil : "≤ 1.25×", limit: pinned || pair ? nil : 1.25),
            row(
                "`$/ping` round trip p99", "ping.p99", "floorPing.p99", "C echo",
                target: pinned || pair ? nil : "≤ 1.5×", limit: pinned || pair ? nil : 1.5),
            row(
                "`coordinator/route` round trip p50", "route.p50", "floorRoute.p50", "C echo",
                target: pinned || pair ? nil : "≤ 1.3×", limit: pinned || pair ? nil : 1.3),
            row(
                "`coordinator/route` round trip p99", "route.p99", "floorRoute.p99", "C echo",
                target: pinned || pair ? nil : "≤ 1.5×", limit: pinned || pair ? nil : 1.5),
        ]
        if pinned {
            rows.append(
                row(
                    "host's own cost p50: Switchyard host ↔ C plugin", "hostC.p50", "cHost.p50",
                    "C libuv host ↔ C plugin", target: "≤ 1.5×", limit: 1.5))
            rows.append(
                row("host's own cost p99", "hostC.p99", "cHost.p99", "C libuv host ↔ C plugin", target: nil, limit: nil)
            )
            // What a route costs in software, host and SDK together, against the same exchange between two C programs.
            rows.append(
                row(
                    "host + SDK cost p50: `coordinator/route`, host ↔ Swift plugin", "route.p50", "cHost.p50",
                    "C libuv host ↔ C plugin", target: "≤ 2×", limit: 2))
        }
        return rows
    }

    // MARK: - Pipelined

    func pipelined() async throws -> [Row] {
        let section = "Pipelined messages, host ↔ Swift plugin"
        StandardError.write("\(section)…\n")
        let host = try await startHost([PluginManifest(name: "bench", product: "BenchPlugin")], root: Self.benchRoot)
        defer { Task { await host.shutdown() } }
        let count = options.pipelined
        var floorPings: [Double] = [], floorRoutes: [Double] = [], pings: [Double] = [], routes: [Double] = []
        _ = await host.requestBurst("bench", method: PingRequest.method, params: [:], count: count / 10)  // warm-up
        let cHost = "\(products)/switchyard-c-host", cPlugin = "\(products)/switchyard-c-plugin"
        for run in 1...options.runs {
            // The floor keeps the same window in flight: a C libuv host and the C plugin.
            for (route, into) in [(false, 0), (true, 1)] {
                let elapsed = try cHostPipelined(
                    host: cHost, plugin: cPlugin, count: count, window: Self.peerWindow, route: route)
                let rate = Double(count) / (Double(elapsed) / 1e9)
                if into == 0 { floorPings.append(rate) } else { floorRoutes.append(rate) }
            }
            let ping = await host.requestBurst(
                "bench", method: PingRequest.method, params: [:], count: count, window: Self.peerWindow)
            let route = await host.requestBurst(
                "bench", method: CoordinatorRouteRequest.method, params: Self.routeParams, count: count,
                window: Self.peerWindow)
            guard ping.errors.isEmpty, route.errors.isEmpty else {
                throw BenchFailure(
                    "pipelined burst failed: \((ping.errors + route.errors).first.map { "\($0)" } ?? "")")
            }
            pings.append(Double(ping.answered) / (Double(ping.elapsedNanoseconds) / 1e9))
            routes.append(Double(route.answered) / (Double(route.elapsedNanoseconds) / 1e9))
            StandardError.write(
                "  run \(run): \(Int(pings.last ?? 0)) pings/s, \(Int(routes.last ?? 0)) routes/s; C libuv host \(Int(floorPings.last ?? 0)) pings/s, \(Int(floorRoutes.last ?? 0)) routes/s\n"
            )
        }
        let floorName = "C libuv host ↔ C plugin, same window"
        var ping = Row(
            section: section,
            measure: "`$/ping` answered per second (\(count) sent, at most \(Self.peerWindow) in flight)", unit: "/s",
            switchyard: median(pings), floor: median(floorPings), floorName: floorName, target: "≥ 0.5× floor",
            higherIsBetter: true)
        ping.met = ping.ratio <= 2
        ping.spread = ratioSpread(pings, floorPings, higherIsBetter: true)
        // The C plugin answers a route with `{}`: the floor pays the request's size, not a screen's answer.
        var route = Row(
            section: section, measure: "`coordinator/route` answered per second", unit: "/s",
            switchyard: median(routes), floor: median(floorRoutes), floorName: floorName + ", answered `{}`",
            target: "≥ 0.5× floor", higherIsBetter: true)
        route.met = route.ratio <= 2
        route.spread = ratioSpread(routes, floorRoutes, higherIsBetter: true)
        return [ping, route]
    }

    // MARK: - Syscalls

    /// Read and write calls per message (`/proc/PID/io` syscr + syscw around a measured series) of the host and of
    /// the plugin, beside the C pair's (a C libuv host and the C plugin). `epoll_wait` is not among them: the kernel
    /// counts only the read and write family there.
    func syscalls() async throws -> [Row] {
        let section = "Syscalls per message (read and write calls, `/proc/PID/io`)"
        StandardError.write("\(section)…\n")
        let host = try await startHost(
            [
                PluginManifest(name: "bench", product: "BenchPlugin"),
                PluginManifest(name: "c", product: "switchyard-c-plugin"),
            ], root: Self.benchRoot)
        defer { Task { await host.shutdown() } }
        let count = max(1_000, options.count / 2)
        let statuses = await host.status()
        func pid(_ name: String) throws -> Int32 {
            guard let pid = statuses.first(where: { $0.name == name })?.pid else {
                throw BenchFailure("no pid for plugin \(name)")
            }
            return pid
        }
        let (benchPID, cPID) = (try pid("bench"), try pid("c"))
        /// Calls per message of this process (the host) and of `plugin` over `series`.
        func measure(_ plugin: Int32, _ series: () async throws -> Void) async throws -> (host: Double, plugin: Double)
        {
            guard let hostBefore = processIO(nil), let pluginBefore = processIO(plugin) else {
                throw BenchFailure("cannot read /proc/PID/io")
            }
            try await series()
            guard let hostAfter = processIO(nil), let pluginAfter = processIO(plugin) else {
                throw BenchFailure("cannot read /proc/PID/io")
            }
            func perMessage(_ before: (reads: Int, writes: Int), _ after: (reads: Int, writes: Int)) -> Double {
                Double(after.reads - before.reads + after.writes - before.writes) / Double(count)
            }
            return (perMessage(hostBefore, hostAfter), perMessage(pluginBefore, pluginAfter))
        }
        _ = try await host.pingSeries("bench", count: count / 10)  // warm-up
        let hostC = try await measure(cPID) { _ = try await host.pingSeries("c", count: count) }
        let swiftPing = try await measure(benchPID) { _ = try await host.pingSeries("bench", count: count) }
        let swiftRoute = try await measure(benchPID) {
            _ = try await host.routeSeries("bench", Self.routeRequest, count: count)
        }
        let floor = try cHostSyscalls(
            host: "\(products)/switchyard-c-host", plugin: "\(products)/switchyard-c-plugin", count: count)
        StandardError.write(
            "  host \(format(hostC.host)) per ping (C host \(format(floor.host))), Swift plugin \(format(swiftPing.plugin)) per ping, \(format(swiftRoute.plugin)) per route (C plugin \(format(floor.plugin)))\n"
        )
        func row(_ measure: String, _ value: Double, _ floorValue: Double, _ floorName: String) -> Row {
            Row(
                section: section, measure: measure, unit: "calls", switchyard: value, floor: floorValue,
                floorName: floorName, target: nil)
        }
        return [
            row("host: a `$/ping` round trip (↔ C plugin)", hostC.host, floor.host, "C libuv host"),
            row(
                "host: a `coordinator/route` round trip (↔ Swift plugin)", swiftRoute.host, floor.host,
                "C libuv host, a ping"),
            row("Swift SDK: a `$/ping` answered", swiftPing.plugin, floor.plugin, "C plugin"),
            row("Swift SDK: a `coordinator/route` answered", swiftRoute.plugin, floor.plugin, "C plugin, a ping"),
        ]
    }

    // MARK: - Spawn to ready

    func spawnToReady() async throws -> [Row] {
        let section = "Spawn to ready (fork, exec, handshake done)"
        StandardError.write("\(section)…\n")
        // Each sample in a fresh `switchyard run`: uv_spawn forks the host, so its cost grows with the host's memory,
        // and this benchmark's own process is far bigger than a deployed host.
        func measure(_ plugin: PluginManifest) async throws -> Double {
            var samples: [Double] = []
            for index in 0..<options.spawns {
                let server = try await Server(
                    manifest: Manifest(app: "bench-spawn", plugins: [plugin]), products: products,
                    name: "spawn-\(plugin.name)-\(index)")
                _ = try? server.tree()  // answered once start-up is over (host/status answers at once)
                let status = try? server.client.call(HostStatusRequest.self, Empty()).plugins.first
                server.stop()
                guard let micros = status?.startupMicroseconds, status?.state == "ready" else {
                    throw BenchFailure("\(plugin.name) did not start: \(String(describing: status?.error))")
                }
                samples.append(Double(micros) / 1_000)
            }
            return median(samples)
        }
        let c = try await measure(PluginManifest(name: "c", product: "switchyard-c-plugin"))
        var rows: [Row] = []
        var swift = Row(
            section: section, measure: "Swift SDK plugin", unit: "ms",
            switchyard: try await measure(PluginManifest(name: "bench", product: "BenchPlugin")), floor: c,
            floorName: "C plugin", target: "≤ 1.3×")
        swift.met = swift.ratio <= 1.3
        rows.append(swift)
        if let python = realPython() {
            rows.append(
                Row(
                    section: section, measure: "Python plugin (\(python.split(separator: "/").last ?? ""))", unit: "ms",
                    switchyard: try await measure(
                        PluginManifest(name: "python", command: [python, "\(directory)/Plugins/python/hello.py"])),
                    floor: c, floorName: "C plugin", target: nil))
        }
        if let node = FileSystem.findExecutable("node", path: SystemProcess.environmentValue("PATH")) {
            rows.append(
                Row(
                    section: section, measure: "Node plugin (hello.js)", unit: "ms",
                    switchyard: try await measure(
                        PluginManifest(name: "node", command: [node, "\(directory)/Plugins/node/hello.js"])), floor: c,
                    floorName: "C plugin", target: nil))
        }
        return rows
    }

    /// The interpreter itself, not a pyenv shim (which costs ~50 ms per start).
    func realPython() -> String? {
        guard let result = try? SystemProcess.run(["python3", "-c", "import sys; print(sys.executable)"]),
            result.status == 0
        else { return nil }
        let path = result.text.trimmingCharacters()
        return FileSystem.isExecutable(path) ? path : nil
    }

    // MARK: - Crash to restored tree

    func crashToRestoredTree() async throws -> [Row] {
        var rows = [try await crashToRestoredTree(instances: 100)]
        if !options.quick { rows.append(try await crashToRestoredTree(instances: 1_000)) }
        return rows
    }

    func crashToRestoredTree(instances count: Int) async throws -> Row {
        let section = "Crash to restored tree"
        StandardError.write("\(section) (\(count) instances)…\n")
        // No backoff, no intensity limit: every kill is a first restart.
        let plugin = PluginManifest(
            name: "bench", product: "BenchPlugin",
            restart: RestartPolicy(policy: .permanent, maxRestarts: 1_000, windowSeconds: 1, backoffMs: 0))
        let host = try await startHost([plugin], root: Self.benchRoot)
        defer { Task { await host.shutdown() } }
        // The root and its children on its stack, 100 per chain (a chain has at most 256 steps).
        var made = 1
        while made < count {
            let batch = min(100, count - made)
            _ = try await host.navigate(
                Array(repeating: [NavigationStep.route("sub"), .parent], count: batch).flatMap { $0 })
            made += batch
        }
        let before = await host.snapshot()
        guard before.instances.count == count else {
            throw BenchFailure("expected \(count) instances, got \(before.instances.count)")
        }
        var iterator = host.events().makeAsyncIterator()
        var recoveries: [Double] = [], spawns: [Double] = []
        for kill in 1...max(2, options.spawns / (count > 100 ? 5 : 3)) {
            let start = UVLoop.hrtime
            await host.signal(plugin: "bench", SIGKILL)
            while let event = await iterator.next() {
                if case .pluginChanged(let status) = event, status.name == "bench", status.state == .ready,
                    status.restarts == kill
                {
                    recoveries.append(Double(UVLoop.hrtime - start) / 1e6)
                    spawns.append(Double(status.startupMicroseconds ?? 0) / 1_000)
                    break
                }
            }
            guard await host.snapshot() == before else { throw BenchFailure("the tree changed across a restart") }
        }
        var row = Row(
            section: section, measure: "SIGKILL a plugin owning \(count) instances → tree served again", unit: "ms",
            switchyard: median(recoveries), floor: median(spawns), floorName: "its spawn to ready",
            target: "≤ floor + 2 ms")
        row.met = row.switchyard <= row.floor + 2
        return row
    }

    // MARK: - A separate `switchyard run` process

    /// A real `switchyard run` host for `plugins`, driven over its control socket.
    final class Server {
        let pid: Int32
        let socket: String
        let client: ControlClient

        init(manifest: Manifest, products: String, name: String) async throws {
            let folder = "/tmp/switchyard-bench-\(getpid())-\(name)"
            _ = try? SystemProcess.run(["rm", "-rf", folder])
            try? FileSystem.makeDirectory(folder)
            let manifestPath = "\(folder)/switchyard.json"
            try FileSystem.writeFileAtomically(manifestPath, try JSONValueEncoder().encodeBytes(manifest))
            socket = "\(folder)/control.sock"
            pid = try SystemProcess.launch(
                [
                    "\(products)/switchyard", "run", "--manifest", manifestPath, "--socket", socket, "--log-level",
                    "error",
                ],
                logPath: "\(folder)/host.log")
            // Polling a socket path: the host has no way to tell a process it did not start that it is ready.
            let deadline = UVLoop.hrtime + 60_000_000_000
            while !UnixSocket.isListening(socket) {
                guard UVLoop.hrtime < deadline, SystemProcess.isRunning(pid) else {
                    throw BenchFailure("switchyard run did not start; see \(folder)/host.log")
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            client = try ControlClient(path: socket, timeoutMilliseconds: 60_000)
        }

        func navigate(_ instance: InstanceID?, _ steps: [NavigationStep]) throws -> NavigateRequest.Result {
            try client.call(NavigateRequest.self, NavigateRequest.Params(instance: instance, steps: steps))
        }

        func tree() throws -> TreeSnapshot { try client.call(TreeGetRequest.self, Empty()) }

        var residentBytes: Int { SystemProcess.residentBytes(of: pid) }

        func stop() {
            _ = try? client.call(HostShutdownRequest.self, Empty())
            SystemProcess.reap(pid)
        }
    }

    static func chain(_ count: Int, root: String) -> Manifest {
        Manifest(
            app: "bench-\(count)", root: CoordinatorReference(plugin: "\(root)0", type: "bench"),
            plugins: (0..<count).map { index in
                PluginManifest(
                    name: "\(root)\(index)", product: "BenchPlugin", args: ["--peer", "\(root)\((index + 1) % count)"])
            })
    }

    func deepLinkFromControlClient() async throws -> [Row] {
        let section = "A deep link across four plugins, from a control client"
        StandardError.write("\(section)…\n")
        let server = try await Server(manifest: Self.chain(4, root: "bench"), products: products, name: "deeplink")
        defer { server.stop() }
        let iterations = max(20, options.count / 20)
        var pings: [UInt64] = [], links: [UInt64] = []
        for _ in 0..<iterations {
            let start = UVLoop.hrtime
            _ = try server.client.call("$/ping")
            pings.append(UVLoop.hrtime - start)
        }
        let url = "switchyard://remote/remote/remote/item/7"
        for _ in 0..<iterations {
            let start = UVLoop.hrtime
            let landed = try server.client.call(OpenRequest.self, .init(url: url))
            links.append(UVLoop.hrtime - start)
            guard landed.instance.rawValue > 1 else { throw BenchFailure("the link landed on the root") }
            _ = try server.navigate(nil, [.popToRoot])
        }
        pings.sort()
        links.sort()
        // Seven plugin round trips: route, create, route, create, route, create, route.
        let floor50 = percentile(pings, 0.5) / 1_000 + 7 * echoP50
        let floor99 = percentile(pings, 0.99) / 1_000 + 7 * echoP99
        return [
            Row(
                section: section, measure: "`open` \(url) p50", unit: "µs", switchyard: percentile(links, 0.5) / 1_000,
                floor: floor50, floorName: "socket ping + 7 echo hops", target: nil),
            Row(
                section: section, measure: "`open` p99", unit: "µs", switchyard: percentile(links, 0.99) / 1_000,
                floor: floor99, floorName: "socket ping + 7 echo hops", target: nil),
        ]
    }

    // MARK: - Scale

    /// Builds the tree: the plugins' first instances chained by `remote`, `subs` children each, `items` screens on
    /// every instance.
    func build(_ server: Server, plugins: Int, subs: Int, items: Int) throws -> TreeSnapshot {
        if plugins > 1 { _ = try server.navigate(nil, Array(repeating: .route("remote"), count: plugins - 1)) }
        var tree = try server.tree()
        for index in 0..<plugins {
            guard let first = tree.instances.first(where: { $0.plugin == "bench\(index)" }) else { continue }
            var steps: [NavigationStep] = []
            for _ in 0..<subs { steps += [.route("sub"), .parent] }
            _ = try server.navigate(first.id, steps)
        }
        tree = try server.tree()
        for instance in tree.instances where items > 0 {
            _ = try server.navigate(instance.id, (0..<items).map { .route("item", ["id": .string("\($0)")]) })
        }
        return try server.tree()
    }

    func scale() async throws -> [Row] {
        let section = "Scale: 50 plugins, 1,000 instances, 10,000 entries"
        StandardError.write("\(section)…\n")
        let plugins = options.quick ? 5 : 50
        let big = try await Server(manifest: Self.chain(plugins, root: "bench"), products: products, name: "scale")
        defer { big.stop() }
        let bigTree = try build(big, plugins: plugins, subs: 19, items: options.quick ? 2 : 9)
        let small = try await Server(manifest: Self.chain(1, root: "bench"), products: products, name: "small")
        defer { small.stop() }
        let smallTree = try build(small, plugins: 1, subs: 19, items: options.quick ? 2 : 9)
        let entries = bigTree.instances.reduce(0) { $0 + ($1.entries?.count ?? 0) + ($1.root == nil ? 0 : 1) }
        StandardError.write("  built \(bigTree.instances.count) instances, \(entries) entries\n")

        var rows: [Row] = []
        var rss = Row(
            section: section,
            measure:
                "host RSS (`switchyard run`, \(plugins) plugins, \(bigTree.instances.count) instances, \(entries) entries)",
            unit: "MiB",
            switchyard: Double(big.residentBytes) / 1_048_576, floor: Double(small.residentBytes) / 1_048_576,
            floorName: "1 plugin, 20 instances", target: "≤ 25 MiB")
        rss.met = rss.switchyard <= 25
        rows.append(rss)

        // A tree operation on a node deep in the big tree, against the same on the small one.
        func operations(_ server: Server, _ tree: TreeSnapshot, plugin: String) throws -> (route: Double, pop: Double) {
            guard let target = tree.instances.last(where: { $0.plugin == plugin }) else {
                throw BenchFailure("no instance of \(plugin)")
            }
            var routes: [UInt64] = [], pops: [UInt64] = []
            for _ in 0..<max(20, options.count / 50) {
                var start = UVLoop.hrtime
                _ = try server.navigate(target.id, [.route("item", ["id": "x"])])
                routes.append(UVLoop.hrtime - start)
                start = UVLoop.hrtime
                _ = try server.navigate(target.id, [.popLast])
                pops.append(UVLoop.hrtime - start)
            }
            return (percentile(routes.sorted(), 0.5) / 1_000, percentile(pops.sorted(), 0.5) / 1_000)
        }
        let deep = "bench\(plugins / 2)"
        let bigOps = try operations(big, bigTree, plugin: deep)
        let smallOps = try operations(small, smallTree, plugin: "bench0")
        var route = Row(
            section: section, measure: "a route on a node at depth \(plugins / 2 + 1) (one plugin hop), p50",
            unit: "µs", switchyard: bigOps.route, floor: smallOps.route, floorName: "same on the small tree",
            target: "≈ 1× (O(depth))")
        route.met = route.ratio <= 1.5
        var pop = Row(
            section: section, measure: "a `popLast` there (no plugin hop), p50", unit: "µs", switchyard: bigOps.pop,
            floor: smallOps.pop, floorName: "same on the small tree", target: "≈ 1× (O(depth))")
        pop.met = pop.ratio <= 1.5
        rows += [route, pop]

        let bigGet = try rawRoundTrips(big.socket, request: "tree/get", count: max(3, options.runs * 5))
        let smallGet = try rawRoundTrips(small.socket, request: "tree/get", count: max(3, options.runs * 5))
        var get = Row(
            section: section,
            measure:
                "`tree/get`: snapshot built, encoded (\(format(Double(bigGet.bytes) / 1_048_576)) MiB) and read by a client, p50",
            unit: "ms",
            switchyard: bigGet.p50 / 1e6, floor: smallGet.p50 / 1e6, floorName: "same for the small tree",
            target: "≤ 5 ms")
        get.met = get.switchyard <= 5
        rows.append(get)

        let target = bigTree.instances.last(where: { $0.plugin == deep })?.id
        let ten = try fanOut(big, watchers: 10, target: target)
        let one = try fanOut(big, watchers: 1, target: target)
        rows.append(
            Row(
                section: section, measure: "a change until 10 watchers have its `tree/changed` with the snapshot, p50",
                unit: "ms",
                switchyard: ten / 1e6, floor: one / 1e6, floorName: "1 watcher", target: nil))
        let bigDeltas = try fanOut(big, watchers: 10, target: target, deltas: true)
        let smallDeltas = try fanOut(small, watchers: 10, target: smallTree.instances.last?.id, deltas: true)
        var deltas = Row(
            section: section, measure: "a change until 10 watchers have its `tree/changed` as a patch (deltas), p50",
            unit: "ms",
            switchyard: bigDeltas / 1e6, floor: smallDeltas / 1e6, floorName: "same on the small tree", target: "≤ 2×")
        deltas.met = deltas.ratio <= 2
        rows.append(deltas)
        return rows
    }

    /// Raw request/response round trips over a fresh socket (the answer is read, not parsed), in ns, with its size.
    func rawRoundTrips(_ path: String, request method: String, count: Int) throws -> (p50: Double, bytes: Int) {
        let socket = try UnixSocket(connectingTo: path)
        defer { socket.close() }
        var samples: [UInt64] = []
        var bytes = 0
        for id in 1...count {
            let start = UVLoop.hrtime
            try socket.write(Message.request(id: .number(Int64(id)), method: method, params: [:]).encodedLine())
            bytes = try readLine(socket)
            samples.append(UVLoop.hrtime - start)
        }
        return (percentile(samples.sorted(), 0.5), bytes)
    }

    private func readLine(_ socket: UnixSocket) throws -> Int {
        var total = 0
        while true {
            let chunk = try socket.read(timeoutMilliseconds: 60_000)
            if chunk.isEmpty { throw BenchFailure("the host closed the socket") }
            total += chunk.count
            if chunk.last == 0x0A { return total }
        }
    }

    /// Time from a change request to the moment the last of `watchers` subscribed clients has the whole
    /// `tree/changed` line (with the snapshot), median over a few changes, in ns.
    func fanOut(_ server: Server, watchers: Int, target: InstanceID?, deltas: Bool = false) throws -> Double {
        let received = Mutex<[Int: [UInt64]]>([:])
        var sockets: [UnixSocket] = []
        var threads: [SystemThread] = []
        for index in 0..<watchers {
            let socket = try UnixSocket(connectingTo: server.socket)
            try socket.write(
                Message.request(
                    id: .number(1), method: TreeSubscribeRequest.method, params: deltas ? ["deltas": true] : [:]
                ).encodedLine())
            _ = try readLine(socket)  // the subscription's answer: the current snapshot
            sockets.append(socket)
            threads.append(
                try SystemThread.spawn { @Sendable in
                    var pending = 0
                    while let chunk = try? socket.read(timeoutMilliseconds: 120_000), !chunk.isEmpty {
                        for byte in chunk where byte == 0x0A { pending += 1 }
                        if pending > 0 {
                            let now = UVLoop.hrtime
                            received.withLock { $0[index, default: []] += Array(repeating: now, count: pending) }
                            pending = 0
                        }
                    }
                })
        }
        var samples: [UInt64] = []
        for change in 1...max(3, options.runs * 4) {
            let start = UVLoop.hrtime
            _ = try server.navigate(target, change % 2 == 1 ? [.route("item", ["id": "fan"])] : [.popLast])
            while true {
                let last: UInt64? = received.withLock { state in
                    guard state.count == watchers, state.values.allSatisfy({ $0.count >= change }) else { return nil }
                    return state.values.map { $0[change - 1] }.max()
                }
                if let last {
                    samples.append(last - start)
                    break
                }
                usleep(100)
            }
        }
        // Half-close: the host ends each session, each reader sees end of stream, then the sockets are closed.
        for socket in sockets { socket.shutdownWrite() }
        for thread in threads { thread.join() }
        for socket in sockets { socket.close() }
        return percentile(samples.sorted(), 0.5)
    }
}
