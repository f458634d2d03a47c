import Glibc
import SwitchyardClient
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// `tree/subscribe {deltas: true}` (spec §15): watchers that apply every `tree/changed` patch hold, after each
/// change, exactly the tree `tree/get` returns, whatever the sequence of changes; watchers without deltas keep
/// getting whole snapshots.
@Suite("Tree changes as deltas", .heavy, .timeLimit(.minutes(3)))
struct DeltaTests {
    /// Three bench plugins in a ring (each `remote` route opens the next one's coordinator); `b2` is not restarted
    /// when it dies, so its instances stay unavailable until `plugin/start`.
    static let plugins: [PluginManifest] = [
        PluginManifest(name: "b0", product: "BenchPlugin", args: ["--peer", "b1"]),
        PluginManifest(
            name: "b1", product: "BenchPlugin", args: ["--peer", "b2"],
            restart: RestartPolicy(policy: .permanent, maxRestarts: 100, backoffMs: 0)),
        PluginManifest(
            name: "b2", product: "BenchPlugin", args: ["--peer", "b0"], restart: RestartPolicy(policy: .temporary)),
    ]

    /// A watcher: its connection and the tree it holds, kept only from what the host sent it.
    final class Watcher {
        let client: ControlClient
        var tree: TreeSnapshot
        let deltas: Bool
        var patches = 0
        var snapshots = 0

        init(path: String, deltas: Bool) throws {
            client = try ControlClient(path: path)
            self.deltas = deltas
            tree = try client.call(TreeSubscribeRequest.self, .init(deltas: deltas ? true : nil))
        }

        /// Applies notifications until one satisfies `done` (bounded by the client's read timeout).
        func read(until done: (String, JSONValue?) -> Bool) throws {
            while true {
                let (method, params) = try client.nextNotification()
                if method == TreeChangedNotification.method, let params {
                    let change = try JSONValueDecoder().decode(TreeChangedNotification.Params.self, from: params)
                    if change.patch != nil { patches += 1 } else { snapshots += 1 }
                    tree = try tree.applying(change)
                }
                if done(method, params) { return }
            }
        }

        func read(toRevision revision: UInt64) throws {
            try read { method, params in
                method == TreeChangedNotification.method && params?["revision"]?.intValue == Int64(revision)
            }
        }

        func read(pluginState plugin: String, _ matches: @escaping (String) -> Bool) throws {
            try read { method, params in
                method == PluginChangedNotification.method && params?["name"]?.stringValue == plugin
                    && matches(params?["state"]?.stringValue ?? "")
            }
        }
    }

    @Test(
        "random change sequences: delta-applied trees equal tree/get after every change; full-snapshot watchers unchanged"
    )
    func randomChanges() async throws {
        try await withControlSocket(Self.plugins, root: CoordinatorReference(plugin: "b0", type: "bench")) {
            host, path in
            let driver = try ControlClient(path: path)
            let watcher = try Watcher(path: path, deltas: true)
            let legacy = try Watcher(path: path, deltas: false)
            var late: Watcher?
            var random = SeededGenerator(seed: 0x5EED_0017)
            var b2Down = false
            for step in 0..<120 {
                let tree = try driver.call(TreeGetRequest.self, Empty())
                let stacks = tree.instances.filter { $0.kind == .stack && $0.status == .ok }
                guard let target = stacks.randomElement(using: &random) else { continue }
                let roll = Int.random(in: 0..<100, using: &random)
                var steps: [NavigationStep]
                switch roll {
                case 0..<30: steps = [.route("item", ["id": .string("\(step)")])]
                case 30..<45: steps = [.route("sub")]
                case 45..<55: steps = [.route("remote")]
                case 55..<75: steps = [.popLast]
                case 75..<80: steps = [.popToRoot]
                case 80..<85:
                    // b1 crashes and is restarted: its instances are restored as they were.
                    await host.signal(plugin: "b1", SIGKILL)
                    try watcher.read(pluginState: "b1") { $0 == "ready" }
                    continue
                case 85..<90 where !b2Down:
                    // b2 dies for good: its instances turn unavailable in the next snapshot.
                    await host.signal(plugin: "b2", SIGKILL)
                    try watcher.read(pluginState: "b2") { $0 != "ready" }
                    b2Down = true
                    continue
                case 85..<90:
                    _ = try driver.call(PluginStartRequest.self, .init(plugin: "b2"))
                    b2Down = false
                    continue
                case 90..<95:
                    late?.client.close()
                    late = try Watcher(path: path, deltas: true)  // just subscribed: holds the snapshot it was answered
                    continue
                default:
                    steps = [.route("item", ["id": .string("x\(step)")]), .popLast, .route("sub")]
                }
                guard
                    case .success(let answer) = try driver.response(
                        NavigateRequest.method,
                        try Coding.encode(NavigateRequest.Params(instance: target.id, steps: steps))),
                    let revision = answer["revision"]?.intValue, revision > Int64(watcher.tree.revision)
                else { continue }  // refused (nothing to pop, plugin down): nothing changed
                let expected = try driver.call(TreeGetRequest.self, Empty())
                // tree/get over the socket and the deltas share the host's cached walk of the tree: the tree itself
                // (built without that cache) is the independent reference.
                #expect(
                    expected == (await host.snapshot()),
                    "step \(step): tree/get differs from the tree at revision \(revision)")
                for each in [watcher, legacy] + (late.map { [$0] } ?? []) {
                    try each.read(toRevision: UInt64(revision))
                    #expect(
                        each.tree == expected,
                        "step \(step): \(each.deltas ? "delta" : "snapshot") watcher differs from tree/get at revision \(revision)"
                    )
                }
            }
            #expect(watcher.patches > 20, "the delta watcher got \(watcher.patches) patches")
            #expect(legacy.patches == 0 && legacy.snapshots > 20)
            #expect(watcher.tree.instances.contains { $0.plugin == "b2" } || watcher.tree.instances.count > 1)
        }
    }

    @Test("a delta watcher that stops reading misses patches, then gets the tree whole once it has read its queue")
    func slowWatcherCatchesUp() async throws {
        let alone = PluginManifest(name: "b0", product: "BenchPlugin", args: ["--peer", "b0"])
        try await withControlSocket([alone], root: CoordinatorReference(plugin: "b0", type: "bench")) { host, path in
            let driver = try ControlClient(path: path)
            let slow = try Watcher(path: path, deltas: true)
            // Each patch replaces the root instance whole, with every entry pushed so far (3 KiB each): well over the
            // 1 MiB a watcher may leave unread (deltaBacklogBytes) before the slow one reads anything.
            let big = String(repeating: "x", count: 3_072)
            var revision: UInt64 = 0
            for index in 0..<60 {
                revision = try driver.call(
                    NavigateRequest.self, .init(steps: [.route("item", ["id": .string("\(index)-\(big)")])])
                ).revision
            }
            try slow.read(toRevision: revision)
            #expect(slow.tree == (await host.snapshot()))
            #expect(
                slow.patches > 0 && slow.snapshots > 0, "patches \(slow.patches), whole snapshots \(slow.snapshots)")
        }
    }
}
