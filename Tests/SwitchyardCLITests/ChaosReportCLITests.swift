import SwitchyardProtocol
import SwitchyardSpec
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// `switchyard chaos --report DIR` and `--check` as a user runs them (§22.5): the report's three files from a short
/// run, the page in a real headless Chromium, and a saved history checked again offline.
@Suite("switchyard chaos reports", .heavy, .timeLimit(.minutes(3)))
struct ChaosReportCLITests {
    /// Runs `switchyard chaos` with `arguments` and its report in a new folder, which it returns with stderr.
    static func report(_ arguments: [String]) async throws -> (folder: String, stderr: [String]) {
        let folder = try TestSweep.temporaryDirectory() + "/report"
        let run = try await ChaosExperimentCLITests.chaos(arguments + ["--report", folder])
        #expect(run.status == 0, "\(run.stdout.suffix(30)) \(run.stderr.suffix(10))")
        #expect(run.stdout.contains("  report: \(folder)/report.html"), "\(run.stdout.suffix(5))")
        return (folder, run.stderr)
    }

    @Test(
        "--report DIR writes report.html, report.json (valid against its schema, with every fault window) and history.jsonl; --progress prints progress lines on stderr; --check DIR passes on it, the model checker skipped"
    )
    func files() async throws {
        // The quick form, 3 s: a kill, a stop and a flood (seed 3).
        let (folder, stderr) = try await Self.report([
            "--duration", "3", "--fault-interval-ms", "600", "--seed", "3", "--rate", "80", "--progress",
        ])
        for name in ["report.html", "report.json", "history.jsonl"] {
            #expect(FileSystem.exists("\(folder)/\(name)"), "\(name) is missing")
        }
        let report = try JSONParser.parse(try FileSystem.readFile("\(folder)/report.json"))
        let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")
        #expect(try validator.validate(report, against: "chaos-report.schema.json") == [])
        #expect(report["seed"] == 3)
        #expect(report["lost"] == 0)
        let windows = try #require(report["faultWindows"]?.arrayValue)
        #expect(windows.count == 4, "\(windows)")
        #expect(report["passed"] == true)
        #expect(stderr.contains { $0.hasPrefix("chaos  ") && $0.contains(" s / 3 s ") }, "\(stderr)")

        let check = try await ChaosExperimentCLITests.chaos(["--check", folder])
        #expect(check.status == 0, "\(check.stdout) \(check.stderr)")
        #expect(check.stdout.contains { $0.contains("lost") && $0.contains(" ok ") })
        #expect(check.stdout.contains { $0.contains("model") && $0.contains("skipped") && $0.contains("live app") })
    }

    @Test(
        "report.html from file:// in headless Chromium: no console error, nothing fetched, three charts drawn by Chart.js, every fault window of report.json named on the chart and in the table, the plugin lanes and restarts, the checkers and the seed; SWITCHYARD_CHAOS_SCREENSHOTS=Docs/chaos saves report.png",
        .enabled(if: HeadlessBrowser.available, "needs chromium and chromium-driver (.ci/run installs them)")
    )
    func browser() async throws {
        // 8 s of every kind of window: healed by the experiment (pipes, a stop with SIGCONT) or by the host (a kill,
        // a flood's quarantine, a stop found hung).
        let (folder, _) = try await Self.report([
            "--experiment", "\(packageRoot)/Plugins/demo/experiments/report-demo.json",
        ])
        var arguments = [folder]
        if let shots = SystemProcess.environmentValue("SWITCHYARD_CHAOS_SCREENSHOTS") {
            arguments += ["--screenshot", "\(shots.hasPrefix("/") ? shots : "\(packageRoot)/\(shots)")/report.png"]
        }
        try await HeadlessBrowser.runScript(
            "\(packageRoot)/Tests/Browser/chaos_report_test.py", arguments, seconds: 120)
    }

    /// A saved run: its folder with `lines` as history.jsonl, and an experiment.json of seed 17.
    static func saved(_ lines: [String]) throws -> String {
        let folder = try TestSweep.temporaryDirectory()
        try FileSystem.writeFileAtomically("\(folder)/history.jsonl", Array(lines.joined(separator: "\n").utf8))
        let experiment = """
            {"app": "\(packageRoot)/Plugins/demo/switchyard.json", "seed": 17, "durationMs": 1000, "load": {"rate": 10},
             "faults": [{"kind": "kill", "target": "todos", "startMs": 100}]}
            """
        try FileSystem.writeFileAtomically("\(folder)/experiment.json", Array(experiment.utf8))
        return folder
    }

    @Test(
        "--check on a saved history with a lost request exits 1 with the violation, the seed and the replay command; a malformed line exits 65 at its line:column; a missing file 66"
    )
    func offline() async throws {
        let folder = try Self.saved([
            #"{"type":"tree","time":0,"revision":1}"#,
            #"{"type":"invoke","time":1,"op":1,"client":1,"f":"link"}"#,
            #"{"type":"ok","time":2,"op":1,"client":1,"f":"link","revision":1}"#,
            #"{"type":"invoke","time":3,"op":2,"client":1,"f":"link"}"#,
            #"{"type":"info","time":30003,"op":2,"client":1,"f":"link","error":"no answer within 30 s"}"#,
        ])
        let lost = try await ChaosExperimentCLITests.chaos(["--check", "\(folder)/history.jsonl"])
        #expect(lost.status == 1, "\(lost.stdout) \(lost.stderr)")
        #expect(lost.stdout.contains { $0.contains("lost") && $0.contains("FAILED") }, "\(lost.stdout)")
        #expect(lost.stdout.contains { $0.contains("op 2 (link) lost: no answer within 30 s") })
        #expect(lost.stdout.contains { $0.contains("lost failed with seed 17; replay the same schedule with:") })
        #expect(
            lost.stdout.contains { $0.hasSuffix("chaos --experiment \(folder)/experiment.json --out \(folder)/replay") }
        )
        #expect(lost.stderr.contains { $0.contains("checkers failed: lost (seed 17)") }, "\(lost.stderr)")

        let malformed = try Self.saved([#"{"type":"tree","time":0}"#, #"{"type":"ok","time":1,"op":}"#])
        let bad = try await ChaosExperimentCLITests.chaos(["--check", malformed])
        #expect(bad.status == 65, "\(bad.stdout) \(bad.stderr)")
        #expect(
            bad.stderr.first?.hasPrefix("\(malformed)/history.jsonl:2:28: error: not valid JSON") == true,
            "\(bad.stderr)")

        let missing = try await ChaosExperimentCLITests.chaos(["--check", "\(folder)/nothing.jsonl"])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.first?.contains("\(folder)/nothing.jsonl") == true, "\(missing.stderr)")
    }
}
