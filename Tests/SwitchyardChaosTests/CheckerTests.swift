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

    static func host(
        _ state: String, fault: Int, at time: Double, _ edit: (inout HistoryEvent) -> Void = { _ in }
    )
        -> HistoryEvent
    {
        var event = HistoryEvent(type: .host, time: time)
        event.state = state
        event.fault = fault
        edit(&event)
        return event
    }

    @Test(
        "host: a kill restored at or above the written revision passes; an older file, a tree never published, a silent full disk and an exit on its own are each named"
    )
    func hostChecker() {
        let good = History([
            Self.tree(5, at: 0), Self.fault(0, "hostKill", [], at: 10),
            Self.host("killed", fault: 0, at: 10) { $0.written = 4 },
            Self.host("restarted", fault: 0, at: 40) {
                $0.revision = 5
                $0.served = 5
            },
            Self.fault(1, "diskFull", [], at: 50), Self.invoke(1, at: 55), Self.ok(1, revision: 6, at: 56),
            Self.host("stateFileFailing", fault: 1, at: 57) { $0.reason = "EFBIG" },
            .init(type: .heal, time: 60).with { $0.fault = 1 },
            Self.host("stateFileWritten", fault: 1, at: 70) { $0.revision = 6 },
        ])
        #expect(HistoryCheckers.host(good).passed, "\(HistoryCheckers.host(good).violations)")
        #expect(HistoryCheckers.host(History([Self.tree(1, at: 0)])).summary == "no host faults")

        let older = History([
            Self.fault(0, "hostKill", [], at: 10), Self.host("killed", fault: 0, at: 10) { $0.written = 9 },
            Self.host("restarted", fault: 0, at: 40) { $0.revision = 7 },
        ])
        #expect(HistoryCheckers.host(older).violations.first?.contains("older than revision 9") == true)
        let unpublished = History([
            Self.fault(0, "hostKill", [], at: 10), Self.host("killed", fault: 0, at: 10),
            Self.host("restarted", fault: 0, at: 40) {
                $0.revision = 7
                $0.reason = "the state file holds revision 7, which the experiment never saw published"
            },
        ])
        #expect(HistoryCheckers.host(unpublished).violations.first?.contains("never saw published") == true)
        let silent = History([
            Self.fault(0, "diskFull", [], at: 10), Self.invoke(1, at: 11), Self.ok(1, revision: 2, at: 12),
        ])
        #expect(HistoryCheckers.host(silent).violations.first?.contains("never said its state file") == true)
        let exited = History([Self.host("exited", fault: 0, at: 10) { $0.reason = "the host exited on its own" }])
        #expect(HistoryCheckers.host(exited).violations.first?.contains("without being killed") == true)
    }

    @Test(
        "a host kill: revisions start again from the restored tree, an operation in flight is indeterminate, not lost"
    )
    func epochs() {
        var inFlight = HistoryEvent.operation(.info, time: 11, op: 2, client: 1, f: "link", error: "no answer")
        inFlight.cause = "hostKilled"
        let history = History([
            Self.tree(5, at: 0), Self.invoke(1, at: 1), Self.ok(1, revision: 6, at: 2), Self.tree(6, at: 2),
            Self.tree(7, at: 3), Self.invoke(2, at: 9), inFlight,
            Self.host("restarted", fault: 0, at: 20) {
                $0.revision = 6
                $0.served = 6
            },
            Self.invoke(3, at: 21), Self.ok(3, revision: 7, at: 22), Self.tree(7, at: 22),
        ])
        #expect(HistoryCheckers.revisions(history).passed, "\(HistoryCheckers.revisions(history).violations)")
        let lost = HistoryCheckers.lost(history)
        #expect(lost.passed && lost.summary.contains("1 in flight at a host kill"), "\(lost.summary)")
        // Without the restart, the same revisions are a violation.
        let noRestart = History(history.events.filter { $0.type != .host })
        #expect(!HistoryCheckers.revisions(noRestart).passed)
    }
}

extension CheckerTests {
    @Test("latency: a host kill's window ends when the new host serves, not when it is started again")
    func hostKillWindow() {
        var events = [Self.fault(0, "hostKill", [], at: 10), HistoryEvent(type: .heal, time: 10).with { $0.fault = 0 }]
        events.append(Self.host("restarted", fault: 0, at: 1_500) { $0.served = 4 })
        for op in 1...3 {
            let at = 1_600 + Double(op) * 10
            events += [Self.invoke(op, at: at), Self.ok(op, revision: UInt64(4 + op), at: at + 2)]
        }
        let summary = HistoryCheckers.latency(History(events)).summary
        #expect(summary.contains("fault 0 hostKill host:"), "\(summary)")
        #expect(summary.contains("after 2.00 ms / 2.00 ms (3)"), "\(summary)")
    }
}

extension HistoryEvent {
    fileprivate func with(_ edit: (inout HistoryEvent) -> Void) -> HistoryEvent {
        var copy = self
        edit(&copy)
        return copy
    }
}
