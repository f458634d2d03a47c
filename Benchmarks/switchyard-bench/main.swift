// switchyard-bench: measures Switchyard against the floor taken in the same run on the same machine.
//
// These machines are shared and noisy: absolute numbers drift, ratios hold. Every figure is therefore paired with
// a floor measured in the same run, runs are repeated, and the table reports medians of the per-run values.
//
//   swift run -c release switchyard-bench [--runs 3] [--count 20000] [--pin] [--json FILE]
import Glibc
import Logging
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardUV

// MARK: - Options

struct Options {
    var runs = 3
    var count = 20_000
    var warmup = 1_000
    var pinned = false
    var json: String? = "bench-results/latest.json"
    var samplesPath: String?

    static func parse() -> Options {
        var options = Options()
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let flag = arguments.next() {
            switch flag {
            case "--runs": options.runs = arguments.next().flatMap(Int.init) ?? options.runs
            case "--count": options.count = arguments.next().flatMap(Int.init) ?? options.count
            case "--pin": options.pinned = true
            case "--json": options.json = arguments.next()
            case "--samples": options.samplesPath = arguments.next()
            case "--help", "-h":
                StandardError.write("usage: switchyard-bench [--runs N] [--count N] [--pin] [--json FILE] [--samples FILE]\n")
                exit(0)
            default:
                StandardError.write("switchyard-bench: unknown option \(flag)\n")
                exit(64)
            }
        }
        return options
    }
}

// MARK: - Statistics

func percentile(_ sorted: [UInt64], _ fraction: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.down)))
    return Double(sorted[index])
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// One row of the report: Switchyard's figure, the floor's, and their ratio (lower is better unless noted).
struct Row {
    let measure: String
    let unit: String
    let switchyard: Double
    let floor: Double
    let target: String?
    var higherIsBetter = false

    var ratio: Double { higherIsBetter ? floor / switchyard : switchyard / floor }
}

// MARK: - Floor: a raw echo child over the same libuv pipes

/// Ping-pong of the host's own ping line through `switchyard-echo` (no parsing on either side).
func echoFloor(count: Int, echo: String) async throws -> [UInt64] {
    let line = Message.request(id: .number(1), method: PingRequest.method, params: [:]).encodedLine()
    return try await runOnLoopThread([UInt64].self, timeoutMs: 120_000) { loop, finish in
        let process = try UVProcess.spawn(loop: loop, options: UVSpawnOptions(executable: echo, stderr: .ignore)) { _ in }
        var samples: [UInt64] = []
        samples.reserveCapacity(count)
        var pending = 0
        var start: UInt64 = 0
        func send() {
            start = UVLoop.hrtime
            try? process.stdin?.write(line)
        }
        try process.stdout?.startReading { event in
            guard case .data(let bytes) = event else { return }
            pending += bytes.count
            guard pending >= line.count else { return }
            pending -= line.count
            samples.append(UVLoop.hrtime - start)
            if samples.count == count {
                process.stdin?.close()
                process.stdout?.close()
                finish(.success(samples))
            } else {
                send()
            }
        }
        send()
    }.value
}

// MARK: - Run

let options = Options.parse()
let products = defaultProductsDirectory()
let echo = "\(products)/switchyard-echo"
guard FileSystem.isExecutable(echo), FileSystem.isExecutable("\(products)/HelloPlugin") else {
    StandardError.write("switchyard-bench: build first: swift build -c release --product switchyard-bench\n")
    exit(1)
}
if options.pinned {
    guard SystemProcess.pinToCPU(0) else {
        StandardError.write("switchyard-bench: cannot pin to CPU 0\n")
        exit(1)
    }
}
var logger = Logger(label: "bench")
logger.logLevel = .error
let manifest = Manifest(plugins: [PluginManifest(name: "swift", product: "HelloPlugin")], directory: FileSystem.currentDirectory)
let host = try await HostHandle.start(manifest: manifest, options: HostOptions(productsDirectory: products), logger: logger)

var pingP50: [Double] = [], pingP99: [Double] = [], floorP50: [Double] = [], floorP99: [Double] = []
var lastSwitchyard: [UInt64] = [], lastFloor: [UInt64] = []
for run in 1...options.runs {
    // Interleave floor and Switchyard so both see the same machine state.
    let floor = Array(try await echoFloor(count: options.count + options.warmup, echo: echo).dropFirst(options.warmup)).sorted()
    let ping = Array(try await host.pingSeries("swift", count: options.count + options.warmup).dropFirst(options.warmup)).sorted()
    floorP50.append(percentile(floor, 0.5))
    floorP99.append(percentile(floor, 0.99))
    pingP50.append(percentile(ping, 0.5))
    pingP99.append(percentile(ping, 0.99))
    lastSwitchyard = ping
    lastFloor = floor
    StandardError.write("run \(run)/\(options.runs): $/ping p50 \(percentile(ping, 0.5) / 1000) µs, floor \(percentile(floor, 0.5) / 1000) µs\n")
}
await host.shutdown()

let mode = options.pinned ? "pinned to CPU 0" : "unpinned"
let rows = [
    Row(measure: "$/ping round trip p50 (\(mode))", unit: "µs", switchyard: median(pingP50) / 1000, floor: median(floorP50) / 1000,
        target: options.pinned ? nil : "≤ 1.25×"),
    Row(measure: "$/ping round trip p99 (\(mode))", unit: "µs", switchyard: median(pingP99) / 1000, floor: median(floorP99) / 1000,
        target: options.pinned ? nil : "≤ 1.5×"),
]

func format(_ value: Double) -> String {
    let text = String((value * 10).rounded() / 10)
    return text
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

var table = "\(pad("measure", 38)) \(pad("switchyard", 12)) \(pad("floor", 12)) \(pad("ratio", 8)) target\n"
for row in rows {
    table += "\(pad(row.measure, 38)) \(pad("\(format(row.switchyard)) \(row.unit)", 12)) \(pad("\(format(row.floor)) \(row.unit)", 12)) \(pad(String((row.ratio * 100).rounded() / 100) + "×", 8)) \(row.target ?? "")\n"
}
print("Switchyard benchmark — \(options.runs) runs × \(options.count) round trips, medians of per-run values; floor: raw C echo child over the same libuv pipes")
print(table, terminator: "")

if let path = options.json {
    var entries: [JSONValue] = []
    for row in rows {
        entries.append([
            "measure": .string(row.measure), "unit": .string(row.unit), "switchyard": .double(row.switchyard),
            "floor": .double(row.floor), "ratio": .double(row.ratio), "target": row.target.map(JSONValue.string) ?? .null,
        ])
    }
    let document: JSONValue = [
        "runs": .int(Int64(options.runs)), "count": .int(Int64(options.count)), "pinned": .bool(options.pinned),
        "cpus": .int(Int64(SystemProcess.availableCPUs)), "results": .array(entries),
    ]
    try? FileSystem.makeDirectory(FileSystem.parentDirectory(of: path), mode: 0o755)
    try FileSystem.writeFileAtomically(path, JSONWriter.encode(document) + [0x0A], mode: 0o644)
    StandardError.write("wrote \(path)\n")
}
if let path = options.samplesPath {
    // Raw samples of the last run (ns), for the latency-distribution picture.
    let document: JSONValue = [
        "switchyard": .array(lastSwitchyard.map { .int(Int64($0)) }), "floor": .array(lastFloor.map { .int(Int64($0)) }),
    ]
    try FileSystem.writeFileAtomically(path, JSONWriter.encode(document), mode: 0o644)
}
