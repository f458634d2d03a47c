import Glibc
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem

// `--peers`: the same echo hop and pipelined burst through the hosts a user would pick instead of Switchyard, each
// with the child its users would write, measured in the same run, under the same placement, trial by trial
// interleaved with Switchyard's own. Benchmarks/peers/README.md says what each peer does and why it is its best
// idiomatic code.

/// Where a measuring host and its child run. Switchyard and every peer of a section get the same.
enum Placement: String, CaseIterable {
    /// The scheduler's choice; only the interleaving makes the ratios fair.
    case unpinned
    /// The host on CPU 0, its child on CPU 1: no migration, no sharing of one CPU, the same for every subject.
    case pair

    var title: String {
        switch self {
        case .unpinned: "unpinned, interleaved trial by trial"
        case .pair: "host pinned to CPU 0, child to CPU 1"
        }
    }

    /// An absolute path: Foundation's `Process` (the Swift peers) does not search `PATH`.
    static let taskset =
        FileSystem.findExecutable("taskset", path: SystemProcess.environmentValue("PATH")) ?? "/usr/bin/taskset"

    /// `command` started on the host's CPU (a peer host is a process of its own).
    func host(_ command: [String]) -> [String] { self == .pair ? [Self.taskset, "-c", "0"] + command : command }

    /// `command` started on the child's CPU.
    func child(_ command: [String]) -> [String] { self == .pair ? [Self.taskset, "-c", "1"] + command : command }

    /// Places this process, every thread of it (Switchyard's in-process host among them), where `host` places a peer
    /// host; `.unpinned` frees it again. By `taskset -a -p`, so the bench needs no affinity code of its own.
    func placeThisProcess() throws {
        let cpus = self == .pair ? "0" : "0-\(max(0, sysconf(Int32(_SC_NPROCESSORS_ONLN)) - 1))"
        let result = try SystemProcess.run([Self.taskset, "-a", "-p", "-c", cpus, String(getpid())])
        guard result.status == 0 else { throw BenchFailure("taskset failed: \(result.text)") }
    }
}

/// A host a user would pick instead, with its child: the commands, before placement.
struct Peer {
    let name: String
    let host: [String]
    let child: [String]
    /// At most this many round trips and pipelined requests: the MCP SDK's stdio transport polls a drained pipe every
    /// 10 ms, so its round trip is that poll and 20,000 of them would take minutes while saying nothing new.
    var limit: Int?
}

/// One subject's figures in one run: round-trip p50 and p99 (µs) and pipelined answers per second.
struct PeerFigures {
    var p50: Double
    var p99: Double
    var perSecond: Double
}

/// One row of the peers table: per-run figures of a peer and of Switchyard measured beside it.
struct PeerRow {
    let placement: Placement
    let name: String
    var peer: [PeerFigures] = []
    var switchyard: [PeerFigures] = []

    /// The median over runs of the per-run ratio peer ÷ Switchyard (so > 1 means the peer is slower), with its range.
    func ratio(
        _ value: (PeerFigures) -> Double, higherIsBetter: Bool = false
    ) -> (median: Double, low: Double, high: Double) {
        let ratios = zip(peer, switchyard).map { higherIsBetter ? value($1) / value($0) : value($0) / value($1) }
        return (median(ratios), ratios.min() ?? .nan, ratios.max() ?? .nan)
    }

    var json: JSONValue {
        func figures(_ runs: [PeerFigures]) -> JSONValue {
            .array(
                runs.map { ["p50Us": .double($0.p50), "p99Us": .double($0.p99), "perSecond": .double($0.perSecond)] })
        }
        return [
            "placement": .string(placement.rawValue), "peer": .string(name), "runs": figures(peer),
            "switchyardRuns": figures(switchyard),
        ]
    }
}

extension Bench {
    static let peersPackage = "Benchmarks/peers"
    /// The window of the pipelined burst: what `HostHandle.requestBurst` keeps in flight, and every peer the same.
    static let peerWindow = 1_024

    /// The peers that can run here; the Swift ones are built first if they are not.
    func peerList() throws -> [Peer] {
        let folder = "\(directory)/\(Self.peersPackage)"
        var peers: [Peer] = []
        if let node = FileSystem.findExecutable("node", path: SystemProcess.environmentValue("PATH")) {
            peers.append(
                Peer(
                    name: "Node `child_process` + `readline`", host: [node, "\(folder)/node/host.js"],
                    child: [node, "\(folder)/node/child.js"]))
        } else {
            StandardError.write("  no node on PATH: the Node peer is skipped\n")
        }
        if let python = realPython() {
            peers.append(
                Peer(
                    name: "Python `asyncio` subprocess", host: [python, "\(folder)/python/host.py"],
                    child: [python, "\(folder)/python/child.py"]))
        } else {
            StandardError.write("  no python3: the Python peer is skipped\n")
        }
        let built = "\(folder)/.build/release"
        let swiftPeers = ["foundation-host", "foundation-child", "mcp-host", "mcp-child"]
        if !swiftPeers.allSatisfy({ FileSystem.isExecutable("\(built)/\($0)") }) {
            let command = ["swift", "build", "-c", "release", "--package-path", folder]
            StandardError.write("  building the Swift peers: \(command.joined(separator: " "))\n")
            let result = try SystemProcess.run(command, timeoutMilliseconds: 1_800_000)
            guard result.status == 0 else {
                throw BenchFailure(
                    "building the Swift peers failed; run `\(command.joined(separator: " "))`:\n\(result.text.suffix(2_000))"
                )
            }
        }
        peers.append(
            Peer(
                name: "Swift Foundation `Process` + `JSONDecoder`", host: ["\(built)/foundation-host"],
                child: ["\(built)/foundation-child"]))
        peers.append(
            Peer(
                name: "MCP Swift SDK 0.12.1 stdio (`ping`)", host: ["\(built)/mcp-host"], child: ["\(built)/mcp-child"],
                limit: 1_000))
        return peers
    }

    /// Each run: Switchyard's `$/ping` series and burst, then each peer's, all under `placement`.
    func peers(_ placement: Placement, list: [Peer]) async throws -> [PeerRow] {
        StandardError.write("Peers (\(placement.title))…\n")
        try placement.placeThisProcess()
        defer { try? Placement.unpinned.placeThisProcess() }
        let plugin = PluginManifest(name: "bench", command: placement.child(["\(products)/BenchPlugin"]))
        let host = try await startHost([plugin], root: Self.benchRoot)
        defer { Task { await host.shutdown() } }
        let total = options.count + warmup
        let pipelined = options.pipelined
        var rows = list.map { PeerRow(placement: placement, name: $0.name) }
        for run in 1...options.runs {
            for index in rows.indices {
                // Switchyard right before each peer: every ratio compares two neighbouring trials.
                let series = trimmed(try await host.pingSeries("bench", count: total))
                let burst = await host.requestBurst(
                    "bench", method: PingRequest.method, params: [:], count: pipelined, window: Self.peerWindow)
                guard burst.errors.isEmpty else { throw BenchFailure("pipelined burst failed: \(burst.errors[0])") }
                rows[index].switchyard.append(
                    PeerFigures(
                        p50: percentile(series, 0.5) / 1_000, p99: percentile(series, 0.99) / 1_000,
                        perSecond: Double(burst.answered) / (Double(burst.elapsedNanoseconds) / 1e9)))
                let peer = list[index]
                rows[index].peer.append(
                    try runPeer(
                        peer, placement: placement, count: peer.limit.map { min(total, $0 + warmup) } ?? total,
                        pipelined: peer.limit.map { min(pipelined, 20 * $0) } ?? pipelined))
                let last = rows[index].peer[run - 1]
                StandardError.write(
                    "  run \(run): \(list[index].name): p50 \(format(last.p50)) µs, \(Int(last.perSecond)) /s (Switchyard \(format(rows[index].switchyard[run - 1].p50)) µs, \(Int(rows[index].switchyard[run - 1].perSecond)) /s)\n"
                )
            }
        }
        return rows
    }

    func runPeer(_ peer: Peer, placement: Placement, count: Int, pipelined: Int) throws -> PeerFigures {
        let command =
            placement.host(peer.host) + [String(count), String(pipelined), String(Self.peerWindow), "--"]
            + placement.child(peer.child)
        let result = try SystemProcess.run(command, timeoutMilliseconds: 600_000)
        let line = result.text.split(separator: "\n").last { $0.hasPrefix("{") }
        guard result.status == 0, let line, let value = try? JSONParser.parse(Array(line.utf8)),
            let samples = value["samples"]?.arrayValue, let nanoseconds = value["pipelinedNs"]?.intValue
        else {
            throw BenchFailure(
                "\(peer.name) failed (\(result.status)): \(command.joined(separator: " "))\n\(result.text.suffix(1_000))"
            )
        }
        let sorted = trimmed(samples.compactMap { $0.intValue.map { UInt64($0) } })
        return PeerFigures(
            p50: percentile(sorted, 0.5) / 1_000, p99: percentile(sorted, 0.99) / 1_000,
            perSecond: Double(pipelined) / (Double(nanoseconds) / 1e9))
    }
}

/// The peers table: each peer's figures (medians over runs) and its ratio to Switchyard measured beside it.
func peersTable(_ rows: [PeerRow], runs: Int) -> String {
    var text = """
        | host ↔ child (\(runs) run(s); ratio: median of per-run ratios, range in brackets) | round trip p50 | peer ÷ Switchyard | p99 | peer ÷ Switchyard | pipelined answers/s | Switchyard ÷ peer |
        | --- | --- | --- | --- | --- | --- | --- |

        """
    var placement: Placement?
    for row in rows {
        if row.placement != placement {
            placement = row.placement
            let own = rows.filter { $0.placement == row.placement }.flatMap(\.switchyard)
            let p50 = median(own.map(\.p50)), p99 = median(own.map(\.p99)), rate = median(own.map(\.perSecond))
            text +=
                "| **\(row.placement.title)** — Switchyard host ↔ Swift SDK plugin | \(format(p50)) µs | 1× | \(format(p99)) µs | 1× | \(format(rate)) | 1× |\n"
        }
        func cell(_ ratio: (median: Double, low: Double, high: Double)) -> String {
            "\(format(ratio.median))× (\(format(ratio.low))–\(format(ratio.high)))"
        }
        text +=
            "| \(row.name) | \(format(median(row.peer.map(\.p50)))) µs | \(cell(row.ratio(\.p50))) | \(format(median(row.peer.map(\.p99)))) µs | \(cell(row.ratio(\.p99))) | \(format(median(row.peer.map(\.perSecond)))) | \(cell(row.ratio(\.perSecond, higherIsBetter: true))) |\n"
    }
    return text
}
