// switchyard-bench: measures Switchyard against floors taken in the same run on the same machine.
//
// These machines are shared and noisy: absolute numbers drift, ratios hold. Every figure is paired with a floor
// measured in the same run, round-trip measures are repeated and reported as medians of per-run values, and the
// pinned measures run last (pinning the process to CPU 0 is not undone).
//
//   SWITCHYARD_STATIC_PLUGINS=1 swift build -c release --product switchyard-bench && .build/release/switchyard-bench
//   (the variable links the Swift plugins fully static, as deployed: see Package.swift)
//   .build/release/switchyard-bench --quick          # a fast pass with small counts (what the smoke test runs)
//   .build/release/switchyard-bench --no-pin         # without the sections that pin CPUs (pair, pinned)
//   .build/release/switchyard-bench --only hops,pinned --trace /tmp/t.jsonl   # the cost of the protocol trace
//   .build/release/switchyard-bench --peers           # also Node, Python, Foundation and the MCP Swift SDK beside it
//   .build/release/switchyard-bench --only peers      # the peers alone (Benchmarks/results/peers.md)
//   .build/release/switchyard-bench --only instructions --merge   # callgrind counts, merged into latest.md
import Glibc
import Logging
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

struct Options {
    var runs = 3
    var count = 20_000
    var pipelined = 100_000
    var spawns = 15
    var output = "Benchmarks/results"
    var quick = false
    var skipPinned = false
    /// Also measure the peers (`--peers`, or `--only peers`): Node, Python, Foundation, the MCP Swift SDK.
    var peers = false
    /// `--host-messages METHOD PRODUCT COUNT` (internal): the host side the instructions section counts.
    var hostMessages: [String]?
    /// Merge this run's rows into the existing latest.json/latest.md instead of replacing them (`--merge`, for `--only`).
    var merge = false
    /// Sections to run (all when empty): hops, pair, pipelined, syscalls, spawn, crash, deeplink, scale, memory, lifecycle, instructions, pinned.
    var only: Set<String> = []
    /// Record the protocol trace of every in-process host in this file (to measure what tracing costs).
    var trace: String?

    func runs(_ section: String) -> Bool {
        switch section {
        case "peers": peers || only.contains(section)
        // Minutes under valgrind: not in the smoke test's quick pass unless asked for.
        case "instructions": only.contains(section) || (only.isEmpty && !quick)
        default: only.isEmpty || only.contains(section)
        }
    }

    static func parse() -> Options {
        var options = Options()
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let flag = arguments.next() {
            switch flag {
            case "--runs": options.runs = arguments.next().flatMap(Int.init) ?? options.runs
            case "--count": options.count = arguments.next().flatMap(Int.init) ?? options.count
            case "--output": options.output = arguments.next() ?? options.output
            case "--no-pin": options.skipPinned = true
            case "--peers": options.peers = true
            case "--merge": options.merge = true
            case "--only": options.only = Set((arguments.next() ?? "").split(separator: ",").map(String.init))
            case "--trace": options.trace = arguments.next()
            case "--quick":
                options.quick = true
                options.runs = 1
                options.count = 300
                options.pipelined = 2_000
                options.spawns = 2
            case "--host-messages":
                // Internal: what the instructions section runs under callgrind.
                options.hostMessages = (0..<3).compactMap { _ in arguments.next() }
            case "--help", "-h":
                StandardError.write(
                    "usage: switchyard-bench [--runs N] [--count N] [--output DIR] [--no-pin] [--quick] [--trace FILE] [--peers] [--merge] [--only hops,pipelined,syscalls,spawn,crash,deeplink,pair,scale,memory,lifecycle,instructions,pinned,peers]\n"
                )
                exit(0)
            default:
                StandardError.write("switchyard-bench: unknown option \(flag)\n")
                exit(64)
            }
        }
        return options
    }
}

let options = Options.parse()
let products = defaultProductsDirectory()
if let arguments = options.hostMessages {
    var quiet = Logger(label: "bench")
    quiet.logLevel = .error
    do { try await hostMessages(arguments, logger: quiet) } catch {
        StandardError.write("switchyard-bench: \(error)\n")
        exit(1)
    }
    exit(0)
}
for product in [
    "switchyard", "switchyard-echo", "switchyard-c-plugin", "switchyard-c-host", "BenchPlugin", "HelloPlugin",
] {
    guard FileSystem.isExecutable("\(products)/\(product)") else {
        StandardError.write(
            "switchyard-bench: \(product) is missing: swift build -c release --product switchyard-bench\n")
        exit(1)
    }
}
var logger = Logger(label: "bench")
logger.logLevel = .error
let trace: TraceWriter?
do { trace = try options.trace.map { try TraceWriter(path: $0, logger: logger) } } catch {
    StandardError.write("switchyard-bench: \(error)\n")
    exit(1)
}
let bench = Bench(options: options, products: products, logger: logger, trace: trace)
let started = UVLoop.hrtime
// Before the pinned section narrows this process's CPU set.
let machine = "\(SystemProcess.onlineCPUs) CPUs, \(cpuModel()), Linux \(kernelRelease())"

var rows: [Row] = []
var peerRows: [PeerRow] = []
do {
    if options.runs("hops") || options.runs("deeplink") { rows += try await bench.hops(pinned: false) }
    if !options.skipPinned && options.runs("pair") { rows += try await bench.hops(pinned: false, pair: true) }
    if options.runs("pipelined") { rows += try await bench.pipelined() }
    if options.runs("syscalls") { rows += try await bench.syscalls() }
    if options.runs("spawn") { rows += try await bench.spawnToReady() }
    if options.runs("crash") { rows += try await bench.crashToRestoredTree() }
    if options.runs("deeplink") { rows += try await bench.deepLinkFromControlClient() }
    if options.runs("scale") { rows += try await bench.scale() }
    if options.runs("memory") { rows += try await bench.memory() }
    if options.runs("lifecycle") { rows += try await bench.lifecycle() }
    if options.runs("instructions") { rows += try await bench.instructions() }
    if options.runs("peers") {
        let peers = try bench.peerList()
        for placement in Placement.allCases { peerRows += try await bench.peers(placement, list: peers) }
    }
    if !options.skipPinned && options.runs("pinned") {
        guard SystemProcess.pinToCPU(0) else { throw BenchFailure("cannot pin to CPU 0") }
        rows += try await bench.hops(pinned: true)
    }
} catch {
    StandardError.write("switchyard-bench: \(error)\n")
    exit(1)
}

if let trace {
    trace.close()
    let statistics = trace.statistics
    StandardError.write(
        "trace: \(statistics.writtenLines) records written, \(statistics.droppedLines) dropped, \(statistics.rotations) rotations\n"
    )
}
let seconds = Double(UVLoop.hrtime - started) / 1e9
var header = """
    Switchyard benchmark: \(options.runs) run(s), \(options.count) round trips each, medians of per-run values; \
    \(String(Int(seconds.rounded()))) s on \(machine)

    """
if options.merge && !rows.isEmpty {
    let previous =
        (try? JSONParser.parse(FileSystem.readFile("\(options.output)/latest.json")))?["results"]?.arrayValue ?? []
    let sections = Set(rows.map(\.section)).sorted().joined(separator: "; ")
    rows = merged(previous.compactMap(Row.init(json:)), rows)
    header =
        String(header.dropLast())
        + " (merged: this run measured \(sections); the other rows are from the previous run)\n"
}
let text = header + (rows.isEmpty ? "" : table(rows))
let peersText = peerRows.isEmpty ? "" : header + peersTable(peerRows, runs: options.runs)
print(
    text + (peersText.isEmpty || rows.isEmpty ? "" : "\n")
        + (peersText.isEmpty ? "" : peersTable(peerRows, runs: options.runs)), terminator: "")

if !options.quick || options.output != "Benchmarks/results" {
    try? FileSystem.makeDirectory(options.output, mode: 0o755)
    let document: JSONValue = [
        "runs": .int(Int64(options.runs)), "count": .int(Int64(options.count)), "seconds": .double(seconds),
        "machine": .string(machine), "results": .array(rows.map(\.json)),
    ]
    // A peers-only run leaves the main table alone; the peers have their own files.
    if !rows.isEmpty {
        try FileSystem.writeFileAtomically(
            "\(options.output)/latest.json", JSONWriter.encode(document) + [0x0A], mode: 0o644)
        try FileSystem.writeFileAtomically("\(options.output)/latest.md", Array(text.utf8), mode: 0o644)
    }
    if !peerRows.isEmpty {
        let peersDocument: JSONValue = [
            "runs": .int(Int64(options.runs)), "count": .int(Int64(options.count)),
            "pipelined": .int(Int64(options.pipelined)),
            "window": .int(Int64(Bench.peerWindow)), "machine": .string(machine), "peers": .array(peerRows.map(\.json)),
        ]
        try FileSystem.writeFileAtomically(
            "\(options.output)/peers.json", JSONWriter.encode(peersDocument) + [0x0A], mode: 0o644)
        try FileSystem.writeFileAtomically("\(options.output)/peers.md", Array(peersText.utf8), mode: 0o644)
    }
    if let samples = bench.pictureSamples {
        let svg = cdfSVG(
            title: "$/ping round trip, host ↔ Swift plugin vs raw C echo child (unpinned, one run)",
            series: [("switchyard", "#d62728", samples.switchyard), ("floor: C echo", "#1f77b4", samples.floor)])
        try FileSystem.writeFileAtomically("\(options.output)/latency-cdf.svg", Array(svg.utf8), mode: 0o644)
    }
    StandardError.write(
        "wrote \(options.output)/\(rows.isEmpty ? "" : "latest.json, latest.md, latency-cdf.svg ")\(peerRows.isEmpty ? "" : "peers.json, peers.md")\n"
    )
}
let missed = rows.filter { $0.met == false }
if !missed.isEmpty {
    StandardError.write("targets not met: \(missed.map(\.measure).joined(separator: "; "))\n")
}

func cpuModel() -> String {
    let text = String(decoding: (try? FileSystem.readFile("/proc/cpuinfo")) ?? [], as: UTF8.self)
    let line = text.split(separator: "\n").first { $0.hasPrefix("model name") }
    return line.map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters() } ?? "unknown CPU"
}

/// The running kernel's release (`/proc/sys/kernel/osrelease`): CPU and kernel say which machine a time came from.
func kernelRelease() -> String {
    String(decoding: (try? FileSystem.readFile("/proc/sys/kernel/osrelease")) ?? [], as: UTF8.self)
        .trimmingCharacters()
}

extension StringProtocol {
    func trimmingCharacters() -> String {
        var text = Substring(self)
        while text.first?.isWhitespace == true { text.removeFirst() }
        while text.last?.isWhitespace == true { text.removeLast() }
        return String(text)
    }
}
