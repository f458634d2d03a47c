import SwitchyardChaos
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSpec
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The report's files from hand-written histories (§22.5): report.json's shape and figures, report.html's parts, a
/// saved history read back with its mistakes at their line and column, and the checkers a saved history can run.
@Suite("Chaos reports and saved histories", .timeLimit(.minutes(1)))
struct ReportTests {
    typealias Event = CheckerTests

    /// 3 s of load: a kill of todos the host heals (down at 1.0 s, back at 1.2 s), a stop of projects the experiment
    /// heals at 2.5 s, requests around them, one failed with a typed error.
    static let history: History = {
        var heal = HistoryEvent(type: .heal, time: 2_500)
        heal.fault = 1
        heal.kind = "stop"
        heal.plugins = ["projects"]
        var restarting = Event.plugin("todos", "restarting", at: 1_010)
        restarting.reason = "crashed (signal 9) <script>"
        var events = [
            Event.tree(1, at: 0), Event.fault(0, "kill", ["todos"], at: 1_000), restarting,
            Event.plugin("todos", "starting", at: 1_100), Event.plugin("todos", "ready", at: 1_200),
            Event.fault(1, "stop", ["projects"], at: 2_000), heal,
        ]
        for op in 1...20 {
            let time = Double(op) * 140
            events.append(Event.invoke(op, at: time))
            events.append(
                op == 8
                    ? .operation(.fail, time: time + 3, op: op, client: 1, f: "link", error: "pluginUnavailable: down")
                    : Event.ok(op, revision: 1, at: time + 2))
        }
        return History(events.sorted { $0.time < $1.time })
    }()

    static let spec = ExperimentSpec(
        app: "app.json", seed: 42, durationMs: 3_000, load: .init(rate: 10), faults: [])

    static func document(
        _ history: History = history, replay: String? = "switchyard chaos --replay /tmp/x"
    )
        -> ChaosReportDocument
    {
        let (results, _) = HistoryCheckers.checkSaved(history, checkers: [.lost, .verdicts])
        return ChaosReportDocument(
            history: history, spec: spec, results: results, plugins: ["main", "todos", "projects"],
            command: "switchyard chaos --seed 42", replay: replay)
    }

    @Test(
        "report.json: valid against chaos-report.schema.json; buckets, fault windows and plugin lanes as they happened")
    func json() throws {
        let value = try JSONParser.parse(Array(Self.document().json.utf8))
        let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")
        #expect(try validator.validate(value, against: "chaos-report.schema.json") == [])
        #expect(value["seed"] == 42)
        #expect(value["replay"] == "switchyard chaos --replay /tmp/x")
        #expect(value["bucketMs"] == 100)
        let timeline = try #require(value["timeline"]?.arrayValue)
        #expect(timeline.compactMap { $0["ok"]?.intValue }.reduce(0, +) == 19)
        #expect(timeline.compactMap { $0["fail"]?.intValue }.reduce(0, +) == 1)
        let windows = try #require(value["faultWindows"]?.arrayValue)
        #expect(windows.map { $0["label"] } == ["kill todos", "stop projects"])
        #expect(windows.map { $0["endMs"] } == [1_200, 2_500])
        #expect(windows.map { $0["healedBy"] } == ["host", "experiment"])
        let lanes = try #require(value["plugins"]?.arrayValue)
        #expect(lanes.map { $0["name"] } == ["main", "todos", "projects"])
        let todos = try #require(lanes[1]["spans"]?.arrayValue)
        #expect(todos.map { $0["state"] } == ["ready", "restarting", "starting", "ready"])
        #expect(todos[1]["verdict"] == "crashed")
        #expect(lanes[1]["restarts"] == [1_010])
        #expect(value["checkers"]?.arrayValue?.map { $0["checker"] } == ["lost", "verdicts"])
    }

    @Test(
        "report.html: self-contained (Chart.js and the data inline, nothing fetched), every fault named, text escaped")
    func html() throws {
        let html = Self.document().html
        #expect(html.contains("Chart.js v3.9.1"))
        #expect(html.contains("<canvas id=\"latency\">") && html.contains("<canvas id=\"plugins\">"))
        for attribute in ["src=", "href=", "http://", "https://www.", "@import"] {
            #expect(!html.replacing("https://www.chartjs.org", with: "").contains(attribute), "\(attribute)")
        }
        #expect(html.contains("<td class=\"fault-label\">kill todos</td>"))
        #expect(html.contains("<td class=\"fault-label\">stop projects</td>"))
        // A reason with markup stays data: escaped in the JSON, never a closing tag.
        #expect(!html.contains("<script>\"") && html.contains("\\u003cscript>"))
        #expect(html.split(separator: "</script>", omittingEmptySubsequences: false).count == 4)
        #expect(html.contains("<code id=\"seed\">42</code>"))
    }

    @Test("the vendored Chart.js and the string the library embeds are the same (python3 Tests/embed-chartjs.py)")
    func embeddedChartJS() throws {
        let vendored = try FileSystem.readFile("\(packageRoot)/Sources/SwitchyardChaos/Vendor/chart.js/chart.min.js")
        let page = Self.document().html
        #expect(page.contains(String(decoding: vendored, as: UTF8.self)))
    }

    @Test(
        "a saved history reads back as written; a line that is not JSON, or not an event, is an error at its line and column"
    )
    func load() throws {
        let folder = try TestSweep.temporaryDirectory()
        let good = "\(folder)/history.jsonl"
        try FileSystem.writeFileAtomically(good, Array(Self.history.jsonl.utf8))
        #expect(try History.load(path: good).events == Self.history.events)

        let broken = "\(folder)/broken.jsonl"
        try FileSystem.writeFileAtomically(
            broken, Array("{\"type\":\"tree\",\"time\":0}\n{\"type\":\"ok\",\"time\":1,}\n".utf8))
        let error = try #require(throws: ManifestError.self) { try History.load(path: broken) }
        #expect(error.kind == .invalid)
        #expect(error.description.hasPrefix("\(broken):2:23: error: not valid JSON"), "\(error)")

        let wrong = "\(folder)/wrong.jsonl"
        try FileSystem.writeFileAtomically(
            wrong, Array("\n{\"type\":\"tree\",\"time\":0}\n  {\"type\":\"ok\",\"time\":\"soon\"}\n".utf8))
        let typed = try #require(throws: ManifestError.self) { try History.load(path: wrong) }
        #expect(typed.description.hasPrefix("\(wrong):3:"), "\(typed)")
        #expect(typed.description.contains("time"), "\(typed)")

        let missing = try #require(throws: ManifestError.self) { try History.load(path: "\(folder)/none.jsonl") }
        #expect(missing.kind == .unreadable)
    }

    @Test("a saved history: the history's checkers run, the model checker is skipped with the reason")
    func checkSaved() {
        let lost = History(Self.history.events + [Event.invoke(99, at: 2_900)])
        let (results, skipped) = HistoryCheckers.checkSaved(lost)
        #expect(results.map(\.checker) == [.lost, .revisions, .verdicts, .latency, .host])
        #expect(results.filter { !$0.passed }.map(\.checker) == [.lost])
        #expect(skipped.map(\.checker) == [.model])
        #expect(skipped.first?.reason.contains("live app") == true)
    }

    @Test("the progress line names the time, the operations and the faults in force")
    func progressLine() {
        let progress = ChaosProgress(
            elapsedMs: 12_000, totalMs: 60_000, operations: 2_403, failed: 31, lost: 0, activeFaults: ["stop todos"])
        #expect(progress.line == "chaos  12.0 s / 60 s  2403 operations, 31 failed, 0 lost  faults: stop todos")
    }
}
