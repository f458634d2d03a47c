import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Synchronization
import Testing

/// The generation test of live upgrades (issue 25's acceptance; Envoy's hot-restart test runs epochs 0 → 1 → 2 the
/// same way): the demo app under a steady load of deep links and chains while its todos plugin is upgraded three
/// times — 1.1.0 adds a route, 1.2.0 renames its share flow's state field with a migration, 1.2.1 changes only its
/// version — and the same load without upgrades for comparison.
@Suite("Upgrade generations under load", .heavy, .timeLimit(.minutes(2)))
struct UpgradeGenerationTests {
    /// Offered load: requests per second, for how long.
    static let rate = 200
    static let seconds = 3.0
    /// The releases the todos plugin goes through, each a build of the same product with flags (Releases.swift).
    static let releases: [(version: String, arguments: [String])] = [
        ("1.1.0", ["--release", "1.1.0", "--with-history"]),
        ("1.2.0", ["--release", "1.2.0", "--with-history", "--share-state-v2"]),
        ("1.2.1", ["--release", "1.2.1", "--with-history", "--share-state-v2"]),
    ]

    @Test(
        "todos upgraded three times under 200 requests/s: none lost or failed, ids and selection kept, the tree as without"
    )
    func generations() async throws {
        let baseline = try await Self.run(upgrading: false)
        let upgraded = try await Self.run(upgrading: true)
        for run in [baseline, upgraded] {
            #expect(run.load.failures.count == 0, "\(run.load.failures.prefix(5))")
            #expect(run.load.answered == run.load.sent && run.load.sent >= Int(Self.seconds * Double(Self.rate)))
            // The load leaves nothing behind: every link and chain it sent came back out.
            #expect(Self.normalized(run.end) == Self.normalized(run.setup))
        }
        // The tree is the one a run without upgrades ends with, but for the field release 1.2 renamed.
        #expect(Self.normalized(upgraded.end) == Self.normalized(baseline.end))
        #expect(upgraded.end.instances.filter { $0.type == "share" }.allSatisfy { $0.state?["todoID"] != nil })
        #expect(upgraded.results.map(\.to.version) == Self.releases.map(\.version))
        #expect(upgraded.results.allSatisfy { $0.outcome == .upgraded && $0.probation.state == .passed })
        // Every step of every upgrade was announced, in order, naming both versions.
        var expected: [String] = []
        var from = "1.0.0"
        for release in Self.releases {
            expected += ["starting \(from)→-"]
            expected += ["holding", "migrating", "probation", "upgraded"].map { "\($0) \(from)→\(release.version)" }
            from = release.version
        }
        #expect(upgraded.phases == expected, "\(upgraded.phases)")
        let held = upgraded.results.map(\.held.requests)
        print("upgrade generations: \(upgraded.load.sent) requests, held per upgrade \(held)")
    }

    struct Run: Sendable {
        let setup: TreeSnapshot
        let end: TreeSnapshot
        let load: Load.Totals
        let results: [PluginUpgradeRequest.Result]
        let phases: [String]
    }

    /// The demo app signed in with four share flows open, the load for ``seconds``, and (`upgrading`) the three
    /// upgrades during it, each after the previous one's probation.
    static func run(upgrading: Bool) async throws -> Run {
        let logs = LogCapture()
        return try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, logs: logs) { host in
            let events = EventLog(host)
            _ = try await host.navigate([.setRoot("authenticated", ["user": "load"])])
            var shares: [InstanceID] = []
            for todo in ["1", "7", "42", "99"] {
                shares.append(try await host.open("switchyard://todos/share/\(todo)").instance)
            }
            let setup = await host.snapshot()
            let todos = try #require(setup.find("todos", "todos")?.id)
            let load = Load(host: host, todos: todos, shares: shares)
            let clock = ContinuousClock()
            let start = clock.now
            let upgrades = Task { () throws -> [PluginUpgradeRequest.Result] in
                guard upgrading else { return [] }
                var results: [PluginUpgradeRequest.Result] = []
                for (index, release) in releases.enumerated() {
                    try await Task.sleep(until: start + .milliseconds(700 + index * 800), clock: clock)
                    let result = try await host.upgradePlugin(
                        .init(
                            plugin: "todos", product: "DemoTodos", args: release.arguments, probationMs: 150,
                            waitForProbation: true))
                    results.append(result)
                    try Self.checkKept(setup, in: await host.snapshot())
                    // Release 1.1's route serves at once.
                    await load.sendInTodosLane { () async throws(ResponseError) in
                        try await host.navigate(from: todos, [.route("history"), .popLast])
                    }
                }
                return results
            }
            await load.run(rate: rate, seconds: seconds)
            let results: [PluginUpgradeRequest.Result]
            do {
                results = try await withDeadline(seconds: 60, "the upgrades") { try await upgrades.value }
                try await withDeadline(seconds: 60, "every request answered") { await load.finished() }
            } catch {
                Self.printLog(logs)
                print("lanes busy: \(load.inLanes)")
                throw error
            }
            let phases = events.all.compactMap { event -> String? in
                guard case .pluginChanged(let status) = event, status.name == "todos", let upgrade = status.upgrade
                else { return nil }
                return "\(upgrade.phase.rawValue) \(upgrade.from ?? "-")→\(upgrade.to ?? "-")"
            }
            if !load.totals.failures.isEmpty { Self.printLog(logs) }
            return Run(setup: setup, end: await host.snapshot(), load: load.totals, results: results, phases: phases)
        }
    }

    /// What the host said about the todos plugin (its upgrades, the requests that waited): to see why a run failed.
    static func printLog(_ logs: LogCapture) {
        for line in logs.all where line.contains("todos") || line.contains("waits") || line.contains("upgrad") {
            print(line.prefix(300))
        }
    }

    /// Every instance of the set-up is still there, where it was, and the selection is the same.
    static func checkKept(_ setup: TreeSnapshot, in now: TreeSnapshot) throws {
        for instance in setup.instances {
            let kept = try #require(now.instance(instance.id), "instance \(instance.id) is gone")
            #expect(kept.plugin == instance.plugin && kept.type == instance.type && kept.parent == instance.parent)
            #expect(kept.selectedTab == instance.selectedTab)
        }
    }

    /// A snapshot without what changes from run to run or by design: the revision, and the share state's field
    /// name (`todoID` from release 1.2, `todo` before).
    static func normalized(_ snapshot: TreeSnapshot) -> TreeSnapshot {
        var copy = snapshot
        copy.revision = 0
        for index in copy.instances.indices where copy.instances[index].type == "share" {
            if case .object(var fields)? = copy.instances[index].state, let todo = fields["todoID"] {
                fields["todoID"] = nil
                fields["todo"] = todo
                copy.instances[index].state = .object(fields)
            }
        }
        return copy
    }
}

/// The load: deep links into the todos flow and chains through the todos and projects plugins, at a steady rate.
/// Each request leaves the tree as it found it (a link's push is popped again; a chain pushes and pops), and the
/// requests on one stack go one at a time (a lane), so the tree at the end is the tree at the start, whatever the
/// interleaving; stacks of their own run side by side.
final class Load: Sendable {
    struct Totals: Sendable {
        var sent = 0
        var answered = 0
        var failures: [String] = []
    }

    let host: HostHandle
    let todos: InstanceID
    let shares: [InstanceID]
    private let lanes: [AsyncSemaphore]
    private let state = Mutex((totals: Totals(), tasks: [Task<Void, Never>](), inLane: [Int: String]()))

    init(host: HostHandle, todos: InstanceID, shares: [InstanceID]) {
        self.host = host
        self.todos = todos
        self.shares = shares
        lanes = (0...shares.count).map { _ in AsyncSemaphore(permits: 1) }
    }

    var totals: Totals { state.withLock { $0.totals } }

    /// The request each lane runs now (where it was sent from): what a hang is stuck on.
    var inLanes: [Int: String] { state.withLock { $0.inLane } }

    /// Offers `rate` requests per second for `seconds`; returns when the last is sent (not answered).
    func run(rate: Int, seconds: Double) async {
        let clock = ContinuousClock()
        let interval = Duration.nanoseconds(1_000_000_000 / rate)
        var next = clock.now
        let end = next + .milliseconds(Int(seconds * 1_000))
        var count = 0
        let todoIDs = ["1", "7", "42", "99"]
        while next < end {
            try? await Task.sleep(until: next, clock: clock)
            let (pick, todo, share) = (count % 3, todoIDs[count % 4], count % shares.count)
            count += 1
            next += interval
            let task = Task {
                switch pick {
                case 0:
                    // A deep link through three plugins, then its push popped (two requests).
                    await self.sendInTodosLane { () async throws(ResponseError) in
                        _ = try await self.host.open("switchyard://todos/todo/\(todo)")
                        self.count()
                        return try await self.host.navigate(from: self.todos, [.popLast])
                    }
                case 1:
                    // A chain in a share flow: todos answers the route, projects creates the project, both undone.
                    await self.send(lane: share) { () async throws(ResponseError) in
                        try await self.host.navigate(
                            from: self.shares[share], [.route("pickProject", ["id": "p1"]), .parent, .popLast])
                    }
                default:
                    await self.sendInTodosLane { () async throws(ResponseError) in
                        try await self.host.navigate(
                            from: self.todos, [.route("todo", ["id": .string(todo)]), .popLast])
                    }
                }
            }
            state.withLock { $0.tasks.append(task) }
        }
    }

    /// Sends one request in the todos stack's lane.
    func sendInTodosLane(
        line: Int = #line, _ body: @Sendable () async throws(ResponseError) -> NavigateRequest.Result
    ) async {
        await send(lane: shares.count, line: line, body)
    }

    /// Sends one request in `lane` (one at a time there) and counts its outcome.
    func send(
        lane: Int, _ what: String = #function, line: Int = #line,
        _ body: @Sendable () async throws(ResponseError) -> NavigateRequest.Result
    ) async {
        await lanes[lane].acquire()
        defer {
            state.withLock { $0.inLane[lane] = nil }
            lanes[lane].release()
        }
        state.withLock {
            $0.totals.sent += 1
            $0.inLane[lane] = "line \(line)"
        }
        do throws(ResponseError) {
            _ = try await body()
            state.withLock { $0.totals.answered += 1 }
        } catch {
            state.withLock { $0.totals.failures.append(error.message) }
        }
    }

    /// One more request answered inside a lane's body (a link's open before its pop).
    private func count() {
        state.withLock {
            $0.totals.sent += 1; $0.totals.answered += 1
        }
    }

    /// Returns once every request sent has its answer.
    func finished() async {
        for task in state.withLock({ $0.tasks }) { await task.value }
    }
}
