import SwitchyardChaos
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSpec
import SwitchyardTestSupport
import Testing

/// The checkers of §22.3 on hand-written histories: each passes a correct history and names the violation in a
/// wrong one.
@Suite("Chaos history checkers", .timeLimit(.minutes(1)))
struct CheckerTests {
    static func invoke(
        _ op: Int, client: Int = 1, f: String = "link", value: JSONValue? = nil, at time: Double
    )
        -> HistoryEvent
    {
        .operation(.invoke, time: time, op: op, client: client, f: f, value: value)
    }

    static func ok(_ op: Int, client: Int = 1, f: String = "link", revision: UInt64, at time: Double) -> HistoryEvent {
        .operation(.ok, time: time, op: op, client: client, f: f, revision: revision)
    }

    static func tree(_ revision: UInt64, _ instance: InstanceSnapshot? = nil, at time: Double) -> HistoryEvent {
        var event = HistoryEvent(type: .tree, time: time)
        event.revision = revision
        event.instance = instance
        return event
    }

    static func plugin(_ name: String, _ state: String, at time: Double) -> HistoryEvent {
        var event = HistoryEvent(type: .plugin, time: time)
        event.plugin = name
        event.state = state
        event.restarts = 0
        return event
    }

    static func fault(_ index: Int, _ kind: String, _ plugins: [String], at time: Double) -> HistoryEvent {
        var event = HistoryEvent(type: .fault, time: time)
        event.fault = index
        event.kind = kind
        event.plugins = plugins
        return event
    }

    @Test("lost: every invocation completed passes; an info or a missing completion is a lost request")
    func lost() {
        let good = History([
            Self.invoke(1, at: 0), Self.ok(1, revision: 2, at: 1), Self.invoke(2, at: 2),
            .operation(.fail, time: 3, op: 2, client: 1, f: "link", error: "pluginUnavailable: down"),
        ])
        #expect(HistoryCheckers.lost(good).passed)
        let bad = History([
            Self.invoke(1, at: 0), .operation(.info, time: 30_000, op: 1, client: 1, f: "link", error: "no answer"),
            Self.invoke(2, at: 1),
        ])
        let result = HistoryCheckers.lost(bad)
        #expect(result.violations.count == 2)
        #expect(result.violations.first?.contains("op 1") == true)
    }

    @Test("revisions: published revisions strictly increase, each acknowledged one was published, no client goes back")
    func revisions() {
        let good = History([
            Self.tree(1, at: 0), Self.invoke(1, at: 0), Self.tree(2, at: 1), Self.ok(1, revision: 2, at: 1),
            Self.invoke(2, at: 2), Self.ok(2, revision: 2, at: 2),
        ])
        #expect(HistoryCheckers.revisions(good).passed)
        let bad = History([
            Self.tree(1, at: 0), Self.tree(3, at: 1), Self.tree(3, at: 2), Self.invoke(1, at: 3),
            Self.ok(1, revision: 5, at: 4), Self.invoke(2, at: 5), Self.ok(2, revision: 3, at: 6),
        ])
        let violations = HistoryCheckers.revisions(bad).violations
        #expect(violations.contains { $0.contains("revision 3 published after 3") })
        #expect(violations.contains { $0.contains("revision 5, which no tree/changed published") })
        #expect(violations.contains { $0.contains("op 2 answered revision 3 after op 1 answered 5") })
    }

    @Test("verdicts: only a fault's targets may leave ready")
    func verdicts() {
        let good = History([
            Self.fault(0, "kill", ["todos"], at: 10), Self.plugin("todos", "restarting", at: 11),
            Self.plugin("todos", "ready", at: 200),
        ])
        #expect(HistoryCheckers.verdicts(good).passed)
        let bad = History(good.events + [Self.plugin("projects", "restarting", at: 300)])
        #expect(
            HistoryCheckers.verdicts(bad).violations == [
                "plugin 'projects', never a fault's target, went restarting at 300 ms"
            ])
    }

    @Test("latency: figures before, during and after each fault; never a violation")
    func latency() {
        var events = [Self.fault(0, "stop", ["todos"], at: 1_000)]
        var heal = HistoryEvent(type: .heal, time: 2_000)
        heal.fault = 0
        events.append(heal)
        for op in 1...30 {
            let time = Double(op * 100)
            events += [Self.invoke(op, at: time), Self.ok(op, revision: 1, at: time + (op >= 10 && op < 20 ? 50 : 1))]
        }
        let result = HistoryCheckers.latency(History(events))
        #expect(result.passed)
        #expect(result.summary.contains("during 50 ms / 50 ms (10)"))
        #expect(result.summary.contains("before 1.00 ms / 1.00 ms (9)"))
    }

    @Test("history.jsonl: each line is valid against history.schema.json and reads back as written")
    func historyFile() throws {
        let history = History([
            Self.tree(1, ModelFixture.stack([]), at: 0),
            Self.invoke(1, client: 0, f: "push", value: ["route": "sample"], at: 0.5),
            Self.ok(1, client: 0, f: "push", revision: 2, at: 1.25), Self.fault(0, "kill", ["todos"], at: 2),
            Self.plugin("todos", "restarting", at: 3),
        ])
        let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")
        for line in history.jsonl.split(separator: "\n") {
            let errors = try validator.validate(try JSONParser.parse(Array(line.utf8)), against: "history.schema.json")
            #expect(errors == [], "\(line): \(errors)")
        }
        #expect(try History(jsonl: history.jsonl).events == history.events)
    }
}
