import Glibc
public import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem
import Synchronization

/// The chaos experiment: a load generator, a fault injector, and a monitor of the host's plugin events.
///
/// The host runs an app whose victim plugin is played by the misbehaving test plugin (see ``app(_:victim:)``), so
/// it can be made to flood as well as be killed and stopped. Choices (requests, faults, targets) follow the seed;
/// timings are the machine's.
public final class ChaosExperiment: Sendable {
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

    /// An experiment against a started host: `rate` requests per second for `duration` seconds, one fault of
    /// `kinds` ("kill", "stop", "flood") every `faultIntervalMs`; a request unanswered after `requestDeadlineMs`
    /// is lost.
    public init(
        host: HostHandle, seed: UInt64, duration: Double, rate: Int, faultIntervalMs: Int, victim: String,
        requestDeadlineMs: Int,
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
        state = Mutex(
            State(
                report: ChaosReport(seconds: duration, seed: seed, rate: rate, faultIntervalMs: faultIntervalMs),
                requests: SeededGenerator(seed: seed), faults: SeededGenerator(seed: seed &* 31 &+ 7)))
    }

    /// `app` with its plugin `victim` played by the misbehaving plugin (ready to flood on SIGUSR1), or nil if the
    /// app has no such plugin. The `misbehave` executable must sit next to the host's other plugins.
    public static func app(_ app: Manifest, victim: String) -> Manifest? {
        guard let index = app.plugins.firstIndex(where: { $0.name == victim }) else { return nil }
        var replaced = app
        replaced.plugins[index] = PluginManifest(
            name: victim, product: "misbehave",
            args: ["--name", victim, "--type", victim, "--flood-on-sigusr1", "--flood-lines", "100000"])
        return replaced
    }

    /// Warms up, runs the load with faults, lets every open fault settle, and reports.
    public func run() async -> ChaosReport {
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
                state.report.latencies.append(
                    Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15)
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
        case 860..<990:
            try await navigate("authenticated", "home", [.selectTab(["todos", "projects", "profile"][pick % 3])])
        default:
            // Sign out and in again as one chain: the signed-in subtree (instances in four plugins) is destroyed and
            // created anew in one revision, or, if any plugin fails, nothing changes.
            _ = try await host.navigate([
                .setRoot("unauthenticated"), .parent, .setRoot("authenticated", ["user": "chaos"]),
            ])
        }
    }

    private func navigate(_ plugin: String, _ type: String, _ steps: [NavigationStep]) async throws(ResponseError) {
        guard let instance = await host.snapshot().instances.first(where: { $0.plugin == plugin && $0.type == type })
        else {
            throw ResponseError(.instanceNotFound, "no \(plugin).\(type) in the tree now")
        }
        _ = try await host.navigate(from: instance.id, steps)
    }

    // MARK: - Faults

    private func injectFault() async {
        let choice: (String, String)? =
            state.withLock { state in
                let ready = state.statuses.values.filter { $0.state == .ready && state.open[$0.name] == nil }.map(
                    \.name
                ).sorted()
                guard !ready.isEmpty else { return nil }
                let plugin = ready[Int(state.faults.next() % UInt64(ready.count))]
                let roll = state.faults.next() % 10
                // Only the misbehaving plugin can flood; a kind left out falls back to one allowed.
                var kind = plugin == victim && roll >= 7 ? "flood" : roll >= 5 ? "stop" : "kill"
                if !kinds.contains(kind) {
                    kind = kinds.contains("kill") ? "kill" : kinds.contains("stop") ? "stop" : "flood"
                }
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
