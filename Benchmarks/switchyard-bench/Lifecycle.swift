import Glibc
import SwitchyardClient
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

extension Bench {
    /// Lazy start and hibernation (spec §20.3) on the 100-plugin app: what the processes cost when most modules are
    /// not in use, what a wake costs next to the spawn it contains, and how much sooner the app is ready.
    func lifecycle() async throws -> [Row] {
        let plugins = options.quick ? 10 : 100
        let section = "Lazy start and hibernation: \(plugins) plugins, 5 in use"
        StandardError.write("\(section)…\n")
        let inUse = 5
        let contracts = try exportContracts(plugins: plugins, from: inUse)
        var running: [Double] = [], hibernated: [Double] = []
        var eager: [Double] = [], lazy: [Double] = []
        for run in 0..<options.runs {
            let (all, allMs) = try await timedStart(Self.chain(plugins, root: "bench"), name: "eager-\(run)")
            eager.append(allMs)
            running.append(try memory(of: all, processes: plugins + 1))
            all.stop()

            var sleepy = Self.chain(plugins, root: "bench")
            for index in inUse..<plugins { sleepy.plugins[index].hibernateAfterMs = 100 }
            let (some, _) = try await timedStart(sleepy, name: "hibernating-\(run)")
            try await waitFor(some, "\(plugins - inUse) plugins hibernated") { statuses in
                statuses.filter { $0.residency == "hibernated" }.count == plugins - inUse
            }
            hibernated.append(try memory(of: some, processes: inUse + 1))
            some.stop()

            var late = Self.chain(plugins, root: "bench")
            for index in inUse..<plugins {
                late.plugins[index].start = .lazy
                late.plugins[index].contract = contracts[index]
            }
            let (few, fewMs) = try await timedStart(late, name: "lazy-\(run)")
            let statuses = try few.client.call(HostStatusRequest.self, Empty()).plugins
            guard statuses.filter({ $0.residency == "lazy" }).count == plugins - inUse else {
                throw BenchFailure("expected \(plugins - inUse) lazy plugins: \(statuses.map(\.state))")
            }
            lazy.append(fewMs)
            few.stop()
        }
        var rows = [
            Row(
                section: section,
                measure: "memory of the host and every plugin process (PSS), \(plugins - inUse) plugins hibernated",
                unit: "MiB", switchyard: median(hibernated), floor: median(running),
                floorName: "all \(plugins) running", target: nil),
            Row(
                section: section, measure: "app start to tree served, \(plugins - inUse) plugins lazy (from contracts)",
                unit: "ms", switchyard: median(lazy), floor: median(eager), floorName: "all \(plugins) eager",
                target: nil),
        ]
        rows.append(try await wake(section: section))
        return rows
    }

    /// A hibernated plugin owning 10 instances, woken by a route to one of them: the request's round trip (spawn,
    /// handshake, 10 restores, the route, the control client) against the spawn to ready it contains.
    private func wake(section: String) async throws -> Row {
        var manifest = Self.chain(2, root: "bench")
        manifest.plugins[1].hibernateAfterMs = 100
        let server = try await Server(manifest: manifest, products: products, name: "wake")
        defer { server.stop() }
        let remote = try server.navigate(nil, [.route("remote")]).instance
        _ = try server.navigate(
            remote, Array(repeating: [NavigationStep.route("sub"), .parent], count: 9).flatMap { $0 })
        // A screen pushed on the root above it takes the plugin off the selected path, so it can hibernate.
        _ = try server.navigate(nil, [.route("item", ["id": "top"])])
        let owned = try server.tree().instances.filter { $0.plugin == "bench1" }.count
        guard owned == 10 else { throw BenchFailure("bench1 owns \(owned) instances, expected 10") }
        var wakes: [Double] = [], spawns: [Double] = []
        for sample in 0..<max(3, options.spawns) {
            try await waitFor(server, "bench1 hibernated") {
                $0.first { $0.name == "bench1" }?.residency == "hibernated"
            }
            let start = UVLoop.hrtime
            _ = try server.navigate(remote, [.route("item", ["id": .string("\(sample)")])])
            wakes.append(Double(UVLoop.hrtime - start) / 1e6)
            let status = try server.client.call(HostStatusRequest.self, Empty()).plugins.first { $0.name == "bench1" }
            guard let micros = status?.startupMicroseconds else { throw BenchFailure("bench1 has no start-up time") }
            spawns.append(Double(micros) / 1_000)
        }
        var row = Row(
            section: section,
            measure: "a route to a hibernated plugin owning 10 instances → answered (its wake, restore included)",
            unit: "ms", switchyard: median(wakes), floor: median(spawns), floorName: "its spawn to ready",
            target: "≤ floor + 2 ms")
        row.met = row.switchyard <= row.floor + 2
        return row
    }

    /// Starts a `switchyard run` and returns it with the milliseconds from launch to its tree served (start-up over).
    private func timedStart(_ manifest: Manifest, name: String) async throws -> (Server, Double) {
        let start = UVLoop.hrtime
        let server = try await Server(manifest: manifest, products: products, name: name)
        _ = try server.tree()
        return (server, Double(UVLoop.hrtime - start) / 1e6)
    }

    /// Polls `host/status` (a process it did not start cannot be sent the host's events) until `condition` holds.
    private func waitFor(
        _ server: Server, _ what: String, _ condition: ([HostStatusRequest.Plugin]) -> Bool
    ) async throws {
        let deadline = UVLoop.hrtime + 60_000_000_000
        while !condition(try server.client.call(HostStatusRequest.self, Empty()).plugins) {
            guard UVLoop.hrtime < deadline else { throw BenchFailure("waited 60 s for \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The proportional set size of the host and its plugin processes, in MiB: shared pages (the Swift runtime the
    /// plugins share) counted once in all, which a sum of RSS would count in every process.
    private func memory(of server: Server, processes: Int) throws -> Double {
        let pids = [server.pid] + (try server.client.call(HostStatusRequest.self, Empty()).plugins.compactMap(\.pid))
        guard pids.count == processes else {
            throw BenchFailure("expected \(processes) processes, found \(pids.count)")
        }
        return Double(pids.reduce(0) { $0 + Self.proportionalBytes(of: $1) }) / 1_048_576
    }

    private static func proportionalBytes(of pid: Int32) -> Int {
        guard let text = try? FileSystem.readFile("/proc/\(pid)/smaps_rollup"),
            let line = String(decoding: text, as: UTF8.self).split(separator: "\n").first(where: {
                $0.hasPrefix("Pss:")
            }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return SystemProcess.residentBytes(of: pid) }
        return kilobytes * 1_024
    }

    /// Each lazy plugin's route contract, exported once (`switchyard contract export`), as its CI would commit it.
    private func exportContracts(plugins: Int, from first: Int) throws -> [Int: String] {
        let folder = "/tmp/switchyard-bench-\(getpid())-contracts"
        try? FileSystem.makeDirectory(folder)
        var paths: [Int: String] = [:]
        for index in first..<plugins {
            let path = "\(folder)/bench\(index).json"
            let result = try SystemProcess.run([
                "\(products)/switchyard", "contract", "export", "--output", path, "--", "\(products)/BenchPlugin",
                "--peer", "bench\((index + 1) % plugins)",
            ])
            guard result.status == 0 else { throw BenchFailure("contract export failed: \(result.text)") }
            paths[index] = path
        }
        return paths
    }
}
