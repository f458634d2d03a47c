import ArgumentParser
import Glibc
import Logging
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardTesting
import SwitchyardUV
import Synchronization

/// `switchyard chaos`: the demo app under a stream of navigation requests while plugins are killed, stopped and
/// flooded at random; a report of what was sent, answered, failed (typed) and lost, and how fast the host recovered.
struct ChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract: "Run the demo app under load while killing, stopping and flooding its plugins; report what was lost.",
        discussion: """
            One plugin of the app (--victim, default profile) is played by the misbehaving plugin, which can also \
            flood. Every --fault-interval-ms one fault hits a random ready plugin: SIGKILL (a crash), SIGSTOP (a hang, \
            found by the heartbeat) or, for the victim, a flood of messages (rate limit, quarantine). Requests are \
            deep links and chains across all plugins at --rate per second. A request is lost if it gets neither an \
            answer nor a typed error within --request-deadline-ms. The run is reproducible in its choices (--seed); \
            timings are the machine's.
            """)

    @Option(name: .long, help: "The app manifest (its root must be the demo's shape for the request mix).")
    var manifest: String = "Plugins/demo/switchyard.json"

    @Option(name: .long, help: "Seconds of load.")
    var duration: Double = 60

    @Option(name: .long, help: "Seed of the choices (requests, faults, targets).")
    var seed: UInt64 = 1

    @Option(name: .long, help: "Requests per second.")
    var rate: Int = 200

    @Option(name: .long, help: "Milliseconds between faults.")
    var faultIntervalMs: Int = 2_000

    @Option(name: .long, help: "The kinds of fault to inject, comma-separated: kill, stop, flood.")
    var faults: String = "kill,stop,flood"

    @Option(name: .long, help: "The plugin the misbehaving plugin plays.")
    var victim: String = "profile"

    @Option(name: .long, help: "A request without an answer after this long is lost.")
    var requestDeadlineMs: Int = 30_000

    @Option(name: .long, help: ArgumentHelp("Also write the report as JSON to FILE.", valueName: "FILE"))
    var reportJSON: String?

    @Option(
        name: .long, help: "Log level for the host (default: error, so the report stands out).",
        transform: { text in
            guard let level = Logger.Level(rawValue: text.lowercased()) else { throw ValidationError("unknown log level '\(text)'") }
            return level
        })
    var logLevel: Logger.Level = .error

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in SwitchyardLogHandler(label: label, level: level) }
        let logger = Logger(label: "switchyard")
        var app: Manifest
        do { app = try Manifest.load(path: manifest) } catch { throw ValidationError("\(error)") }
        guard let index = app.plugins.firstIndex(where: { $0.name == victim }) else {
            throw ValidationError("the manifest has no plugin '\(victim)' to replace")
        }
        app.plugins[index] = PluginManifest(
            name: victim, product: "misbehave",
            args: ["--name", victim, "--type", victim, "--flood-on-sigusr1", "--flood-lines", "100000"])

        let host: HostHandle
        do {
            host = try await HostHandle.start(manifest: app, options: HostOptions(), logger: logger)
        } catch let error as ResponseError {
            throw RunFailure(message: error.description)
        }
        let kinds = Set(faults.split(separator: ",").map { String($0).trimmingWhitespace })
        guard !kinds.isEmpty, kinds.isSubset(of: ["kill", "stop", "flood"]) else {
            throw ValidationError("--faults takes kill, stop and flood")
        }
        let experiment = ChaosExperiment(
            host: host, seed: seed, duration: duration, rate: rate, faultIntervalMs: faultIntervalMs, victim: victim,
            requestDeadlineMs: requestDeadlineMs, kinds: kinds)
        let report = await experiment.run()
        await host.shutdown()
        StandardOutput.write(report.text(command: CommandLine.arguments.joined(separator: " ")))
        if let reportJSON {
            do { try FileSystem.writeFileAtomically(reportJSON, Array(report.json.utf8), mode: 0o644) } catch {
                throw RunFailure(message: "cannot write \(reportJSON): \(error)")
            }
        }
        if report.lost > 0 { throw RunFailure(message: "\(report.lost) requests were lost") }
    }
}

/// What the experiment measured.
struct ChaosReport: Sendable {
    var seconds: Double
    var seed: UInt64
    var rate: Int
    var faultIntervalMs: Int
    var sent = 0
    var answered = 0
    var failed: [String: Int] = [:]
    var lost = 0
    var faults: [String: Int] = [:]
    var restarts = 0
    var failedPlugins: [String] = []
    /// Milliseconds from the fault to the host noticing it, per kind of fault.
    var detect: [String: [Double]] = [:]
    /// Milliseconds from the fault to the plugin ready again with its instances restored.
    var restore: [String: [Double]] = [:]
    var latencies: [Double] = []
    var rssBefore = 0
    var rssAfter = 0
    var finalTreeServed = false
    var instancesAtEnd = 0

    var failedTotal: Int { failed.values.reduce(0, +) }

    static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    static func format(_ milliseconds: Double?) -> String {
        guard let milliseconds else { return "—" }
        return milliseconds < 10 ? String(format1: milliseconds, digits: 2) + " ms" : String(format1: milliseconds, digits: 0) + " ms"
    }

    var rssGrowthPercent: Double { rssBefore > 0 ? (Double(rssAfter) - Double(rssBefore)) / Double(rssBefore) * 100 : 0 }

    func text(command: String) -> String {
        func mib(_ bytes: Int) -> String { String(format1: Double(bytes) / 1_048_576, digits: 1) + " MiB" }
        var lines: [String] = []
        lines.append("switchyard chaos: \(String(format1: seconds, digits: 0)) s, seed \(seed), \(rate) requests/s, a fault every \(faultIntervalMs) ms")
        lines.append("  command: \(command)")
        lines.append("")
        lines.append("  requests sent            \(sent)")
        lines.append("  answered                 \(answered)")
        let kinds = failed.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("  failed with a typed error \(failedTotal)" + (kinds.isEmpty ? "" : "  (\(kinds))"))
        lines.append("  lost                     \(lost)")
        lines.append("  answer latency p50 / p99 \(Self.format(Self.percentile(latencies, 0.5))) / \(Self.format(Self.percentile(latencies, 0.99)))")
        lines.append("")
        let injected = faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        lines.append("  faults injected          \(faults.values.reduce(0, +))  (\(injected))")
        lines.append("  restarts                 \(restarts)" + (failedPlugins.isEmpty ? "" : "  (gave up on: \(failedPlugins.joined(separator: ", ")))"))
        for kind in detect.keys.sorted() {
            let found = detect[kind] ?? []
            let back = restore[kind] ?? []
            lines.append("  \(kind + String(repeating: " ", count: max(0, 6 - kind.count))) detected p50 / p99   \(Self.format(Self.percentile(found, 0.5))) / \(Self.format(Self.percentile(found, 0.99)))   restored tree p50 / p99 \(Self.format(Self.percentile(back, 0.5))) / \(Self.format(Self.percentile(back, 0.99)))  (\(back.count) of \(found.count))")
        }
        lines.append("")
        lines.append("  host RSS                 \(mib(rssBefore)) → \(mib(rssAfter)) (\(rssGrowthPercent >= 0 ? "+" : "")\(String(format1: rssGrowthPercent, digits: 1)) %)")
        lines.append("  tree at the end          \(instancesAtEnd) instances, " + (finalTreeServed ? "every node served" : "some nodes unavailable"))
        return lines.joined(separator: "\n") + "\n"
    }

    var json: String {
        func stats(_ values: [Double]) -> JSONValue {
            ["count": .int(Int64(values.count)), "p50": Self.percentile(values, 0.5).map(JSONValue.double) ?? .null,
             "p99": Self.percentile(values, 0.99).map(JSONValue.double) ?? .null]
        }
        var object: JSONObject = [
            "seconds": .double(seconds), "seed": .int(Int64(seed)), "rate": .int(Int64(rate)), "faultIntervalMs": .int(Int64(faultIntervalMs)),
            "sent": .int(Int64(sent)), "answered": .int(Int64(answered)), "failedTyped": .int(Int64(failedTotal)), "lost": .int(Int64(lost)),
            "restarts": .int(Int64(restarts)), "rssBefore": .int(Int64(rssBefore)), "rssAfter": .int(Int64(rssAfter)),
            "latencyMs": stats(latencies), "finalTreeServed": .bool(finalTreeServed),
        ]
        func sortedObject<V>(_ dictionary: [String: V], _ value: (V) -> JSONValue) -> JSONValue {
            var result = JSONObject()
            for key in dictionary.keys.sorted() { result[key] = dictionary[key].map(value) }
            return .object(result)
        }
        object["failed"] = sortedObject(failed) { .int(Int64($0)) }
        object["faults"] = sortedObject(faults) { .int(Int64($0)) }
        object["detectMs"] = sortedObject(detect, stats)
        object["restoreMs"] = sortedObject(restore, stats)
        return JSONWriter.string(.object(object)) + "\n"
    }
}

extension String {
    init(format1 value: Double, digits: Int) {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if digits == 0 {
            self = String(Int(rounded))
        } else {
            var text = String(rounded)
            if let dot = text.firstIndex(of: ".") {
                let decimals = text.distance(from: dot, to: text.endIndex) - 1
                if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
            }
            self = text
        }
    }
}

/// The experiment itself: a load generator, a fault injector, and a monitor of the host's plugin events.
final class ChaosExperiment: Sendable {
    let host: HostHandle
    let seed: UInt64
    let duration: Double
    let rate: Int
    let faultIntervalMs: Int
    let victim: String
    let requestDeadlineMs: Int
    let kinds: Set<String>

    private struct State {
        var report: ChaosReport
        var requests: SeededGenerator
        var faults: SeededGenerator
        /// Faults waiting to be noticed and recovered from: plugin → (kind, injected at, restarts then, detected).
        var open: [String: (kind: String, at: ContinuousClock.Instant, restarts: Int, detected: Bool)] = [:]
        var statuses: [String: PluginStatus] = [:]
        /// Requests without an answer yet, and when each was sent.
        var inFlight: [Int: (sent: ContinuousClock.Instant, counted: Bool)] = [:]
        var nextRequest = 0
    }

    private let state: Mutex<State>

    init(
        host: HostHandle, seed: UInt64, duration: Double, rate: Int, faultIntervalMs: Int, victim: String, requestDeadlineMs: Int,
        kinds: Set<String>
    ) {
        self.kinds = kinds
        self.host = host
        self.seed = seed
        self.duration = duration
        self.rate = rate
        self.faultIntervalMs = faultIntervalMs
        self.victim = victim
        self.requestDeadlineMs = requestDeadlineMs
        state = Mutex(State(
            report: ChaosReport(seconds: duration, seed: seed, rate: rate, faultIntervalMs: faultIntervalMs),
            requests: SeededGenerator(seed: seed), faults: SeededGenerator(seed: seed &* 31 &+ 7)))
    }

    func run() async -> ChaosReport {
        let events = host.events()
        for status in await host.status() { state.withLock { $0.statuses[status.name] = status } }
        let monitor = Task { for await event in events { self.observe(event) } }
        _ = try? await host.navigate([.setRoot("authenticated", ["user": "chaos"])])
        // Warm up for a moment before the "before" RSS: first-use allocations are not growth.
        await load(for: min(2, duration / 10), faults: false)
        state.withLock { $0.report.rssBefore = SystemProcess.residentBytes() }
        await load(for: duration, faults: true)
        // Let every open fault settle (restart and restore) before reading the end state.
        let settle = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < settle, state.withLock({ !$0.open.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(50))
        }
        let end = await host.snapshot()
        let statuses = await host.status()
        monitor.cancel()
        return state.withLock { state in
            state.report.rssAfter = SystemProcess.residentBytes()
            state.report.restarts = statuses.map(\.restarts).reduce(0, +)
            state.report.failedPlugins = statuses.filter { $0.state == .failed }.map(\.name)
            state.report.finalTreeServed = end.instances.allSatisfy { $0.status == .ok }
            state.report.instancesAtEnd = end.instances.count
            return state.report
        }
    }

    // MARK: - Load

    /// Sends requests at `rate` for `seconds` (and injects faults if asked), then waits for every answer (or for
    /// the deadline that makes it lost).
    ///
    /// One watchdog checks every deadline, rather than a timer per request: a cancelled `Task.sleep` keeps its timer
    /// until it would have fired, and 30 s of them at 200 requests/s is memory the report would count as growth.
    private func load(for seconds: Double, faults: Bool) async {
        let clock = ContinuousClock()
        let start = clock.now
        let end = start + .milliseconds(Int(seconds * 1_000))
        let interval = Duration.nanoseconds(1_000_000_000 / max(1, rate))
        let deadline = Duration.milliseconds(requestDeadlineMs)
        let injector = Task {
            guard faults else { return }
            var next = start + .milliseconds(self.faultIntervalMs)
            while next < end {
                try? await Task.sleep(until: next, clock: clock)
                await self.injectFault()
                next += .milliseconds(self.faultIntervalMs)
            }
        }
        var next = start
        while next < end {
            try? await Task.sleep(until: next, clock: clock)
            Task { await self.request(counted: faults) }
            next += interval
            expireLostRequests(olderThan: deadline)
        }
        await injector.value
        while state.withLock({ !$0.inFlight.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(10))
            expireLostRequests(olderThan: deadline)
        }
    }

    private func expireLostRequests(olderThan deadline: Duration) {
        let now = ContinuousClock.now
        state.withLock { state in
            for (id, request) in state.inFlight where now - request.sent > deadline {
                state.inFlight[id] = nil
                guard request.counted else { continue }
                state.report.sent += 1
                state.report.lost += 1
            }
        }
    }

    /// One request from the mix.
    private func request(counted: Bool) async {
        let (pick, id, started) = state.withLock { state in
            state.nextRequest += 1
            let now = ContinuousClock.now
            state.inFlight[state.nextRequest] = (now, counted)
            return (Int(state.requests.next() % 1_000), state.nextRequest, now)
        }
        var failure: ErrorCode?
        do throws(ResponseError) { try await perform(pick) } catch { failure = error.code }
        let elapsed = ContinuousClock.now - started
        state.withLock { state in
            // Already counted as lost by the watchdog: a late answer does not undo that.
            guard state.inFlight.removeValue(forKey: id) != nil, counted else { return }
            state.report.sent += 1
            if let failure {
                state.report.failed[failure.name, default: 0] += 1
            } else {
                state.report.answered += 1
                state.report.latencies.append(Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15)
            }
        }
    }

    /// The request mix: deep links through up to four plugins (a few rejected by a guard: project p2 is archived),
    /// chains in every plugin, tab switches, and now and then a sign-out and sign-in.
    private func perform(_ pick: Int) async throws(ResponseError) {
        let todo = ["1", "7", "42", "99"][pick % 4]
        switch pick {
        case 0..<250: _ = try await host.open("switchyard://todos/todo/\(todo)")
        case 250..<400: _ = try await host.open("switchyard://projects/\(["p1", "p2", "p7"][pick % 3])")
        case 400..<480: _ = try await host.open("switchyard://projects/\(["p1", "p2", "p7"][pick % 3])/members")
        case 480..<580: _ = try await host.open("switchyard://\(victim)/sample/\(pick)")
        case 580..<700: try await navigate("todos", "todos", [.popToRoot])
        case 700..<780: try await navigate("projects", "projects", [.popToRoot])
        case 780..<860: try await navigate(victim, victim, [.popToRoot])
        case 860..<990: try await navigate("authenticated", "home", [.selectTab(["todos", "projects", "profile"][pick % 3])])
        default:
            // Sign out and in again as one chain: the signed-in subtree (instances in four plugins) is destroyed and
            // created anew in one revision, or, if any plugin fails, nothing changes.
            _ = try await host.navigate([.setRoot("unauthenticated"), .parent, .setRoot("authenticated", ["user": "chaos"])])
        }
    }

    private func navigate(_ plugin: String, _ type: String, _ steps: [NavigationStep]) async throws(ResponseError) {
        guard let instance = await host.snapshot().instances.first(where: { $0.plugin == plugin && $0.type == type }) else {
            throw ResponseError(.instanceNotFound, "no \(plugin).\(type) in the tree now")
        }
        _ = try await host.navigate(from: instance.id, steps)
    }

    // MARK: - Faults

    private func injectFault() async {
        let choice: (String, String)? = state.withLock { state in
            let ready = state.statuses.values.filter { $0.state == .ready && state.open[$0.name] == nil }.map(\.name).sorted()
            guard !ready.isEmpty else { return nil }
            let plugin = ready[Int(state.faults.next() % UInt64(ready.count))]
            let roll = state.faults.next() % 10
            // Only the misbehaving plugin can flood; a kind left out falls back to one allowed.
            var kind = plugin == victim && roll >= 7 ? "flood" : roll >= 5 ? "stop" : "kill"
            if !kinds.contains(kind) { kind = kinds.contains("kill") ? "kill" : kinds.contains("stop") ? "stop" : "flood" }
            if kind == "flood" && plugin != victim { return nil }
            state.open[plugin] = (kind, ContinuousClock.now, state.statuses[plugin]?.restarts ?? 0, false)
            state.report.faults[kind, default: 0] += 1
            return (plugin, kind)
        } ?? nil
        guard let (plugin, kind) = choice else { return }
        switch kind {
        case "flood": await host.signal(plugin: plugin, SIGUSR1)
        case "stop": await host.signal(plugin: plugin, SIGSTOP)
        default: await host.signal(plugin: plugin, SIGKILL)
        }
    }

    private func observe(_ event: HostEvent) {
        guard case .pluginChanged(let status) = event else { return }
        let now = ContinuousClock.now
        state.withLock { state in
            state.statuses[status.name] = status
            guard var fault = state.open[status.name] else { return }
            func milliseconds(_ duration: Duration) -> Double {
                Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
            }
            if !fault.detected && status.state != .ready {
                fault.detected = true
                state.report.detect[fault.kind, default: []].append(milliseconds(now - fault.at))
                state.open[status.name] = fault
            }
            if status.state == .ready && status.restarts > fault.restarts {
                state.report.restore[fault.kind, default: []].append(milliseconds(now - fault.at))
                state.open[status.name] = nil
            } else if status.state == .failed {
                state.open[status.name] = nil
            }
        }
    }
}
