@testable import SwitchyardHost
import SwitchyardProtocol
import Testing

/// The rules of the lifecycle as values (spec §20): the gate that holds requests during an upgrade or while a
/// plugin starts, what a reload changes, and which chains an upgrade lets finish. No process, no loop.
@Suite("Lifecycle rules as values", .timeLimit(.minutes(1)))
struct LifecyclePolicyTests {
    @Test("the gate: requests wait until released or until their own deadline; the held ones are counted")
    func gate() {
        var gate = RequestGate<String>()
        gate.wait("before", deadline: 1_000)
        #expect(!gate.isHeld && gate.heldCount == 0 && gate.count == 1)
        gate.hold()
        gate.wait("a", deadline: 500)
        gate.wait("b", deadline: 2_000)
        #expect(gate.isHeld && gate.heldCount == 2 && gate.nextDeadline == 500)
        #expect(gate.expire(now: 499).isEmpty)
        #expect(gate.expire(now: 1_000) == ["before", "a"])
        #expect(gate.nextDeadline == 2_000)
        gate.open()
        #expect(!gate.isHeld && gate.heldCount == 2)
        #expect(gate.releaseAll() == ["b"] && gate.count == 0 && gate.nextDeadline == nil)
        gate.hold()
        #expect(gate.heldCount == 0)
    }

    @Test("a reload's plan: added, removed, upgraded (a new process), reconfigured (the same one), unchanged")
    func reloadPlan() {
        let old = Manifest(
            plugins: [
                PluginManifest(name: "a", command: ["a"]), PluginManifest(name: "b", command: ["b"]),
                PluginManifest(name: "c", command: ["c"]), PluginManifest(name: "d", command: ["d"]),
            ])
        var new = old
        new.plugins.removeAll { $0.name == "b" }
        new.plugins[1].env = ["LEVEL": "2"]  // c: what the process is started with
        new.plugins[2].hibernateAfterMs = 1_000  // d: what the running process keeps
        new.plugins.append(PluginManifest(name: "e", product: "E"))
        let plan = ReloadPlan(from: old, to: new)
        #expect(plan.added.map(\.name) == ["e"] && plan.removed == ["b"])
        #expect(plan.upgraded.map(\.name) == ["c"] && plan.reconfigured.map(\.name) == ["d"])
        #expect(plan.unchanged == ["a"])
        for (change, needs) in [("limits", true), ("args", true), ("restart", false), ("start", false)] {
            var entry = old.plugins[0]
            switch change {
            case "limits":
                var limits = LimitOverrides()
                limits.requestTimeoutMs = 1
                entry.limits = limits
            case "args": entry.args = ["--flag"]
            case "restart": entry.restart = RestartPolicy(policy: .temporary)
            default: entry.start = .lazy
            }
            #expect(entry.needsNewProcess(comparedTo: old.plugins[0]) == needs, "\(change)")
        }
    }

    @Test("an upgrade's hold lets a chain through to the plugin only if it consulted it already")
    func consultedChains() {
        var scheduler = ChainScheduler<Int>()
        let first = scheduler.begin()
        let second = scheduler.begin()
        scheduler.consult("todos", incarnation: 1, by: first)
        #expect(scheduler.hasConsulted("todos", by: first))
        #expect(!scheduler.hasConsulted("todos", by: second) && !scheduler.hasConsulted("projects", by: first))
        _ = scheduler.finish(first)
        #expect(!scheduler.hasConsulted("todos", by: first))
    }
}
