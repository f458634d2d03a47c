import SwitchyardChaos
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSpec
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Experiment files (§22.2): the committed examples, the errors a wrong one gets, the quick form, and the schedule's
/// determinism.
@Suite("Chaos experiment files", .timeLimit(.minutes(1)))
struct ExperimentFileTests {
    /// Every example in the folder, so a new one is checked without being listed here.
    static let examples = FileSystem.listDirectory("\(packageRoot)/Plugins/demo/experiments")
        .filter { $0.hasSuffix(".json") }.sorted()
    static let demoPlugins = ["main", "unauthenticated", "authenticated", "todos", "projects", "profile"]

    static func write(_ text: String) throws -> String {
        let path = try TestSweep.temporaryDirectory() + "/experiment.json"
        try FileSystem.writeFileAtomically(path, Array(text.utf8))
        return path
    }

    @Test("the committed examples are valid against the schema, load, and name the demo's plugins", arguments: examples)
    func examplesLoad(_ name: String) throws {
        let path = "\(packageRoot)/Plugins/demo/experiments/\(name)"
        let validator = SchemaValidator(directory: "\(packageRoot)/Protocol/schema")
        let errors = try validator.validate(
            try JSONParser.parse(try FileSystem.readFile(path)), against: "experiment.schema.json")
        #expect(errors == [], "\(errors)")
        let spec = try ExperimentSpec.load(path: path)
        #expect(spec.app == "\(packageRoot)/Plugins/demo/experiments/../switchyard.json")
        #expect(spec.problems(plugins: Self.demoPlugins).isEmpty)
    }

    @Test("a value of the wrong type is reported at its line and column, naming the field")
    func typeError() throws {
        let path = try Self.write(
            """
            {
              "app": "app.json", "seed": 1, "durationMs": 1000, "load": {"rate": 10},
              "faults": [
                {"kind": "kill", "target": "todos", "startMs": 10},
                {"kind": "kill", "target": "todos", "startMs": "soon"}
              ]
            }
            """)
        #expect {
            try ExperimentSpec.load(path: path)
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("\(path):5:") && text.contains("faults[1].startMs")
        }
        let typo = try Self.write(
            """
            {"app": "a", "seed": 1, "durationMs": 1, "load": {"rate": 1},
             "faults": [{"kind": "kill", "target": "x", "startMs": 0, "heal": true}]}
            """)
        #expect {
            try ExperimentSpec.load(path: typo)
        } throws: { error in
            "\(error)".hasPrefix("\(typo):2:") && "\(error)".contains("unknown key 'heal'")
        }
        let kind = try Self.write(
            #"{"app": "a", "seed": 1, "durationMs": 1, "load": {"rate": 1}, "faults": [{"kind": "melt", "target": "x", "startMs": 0}]}"#
        )
        #expect(throws: ManifestError.self) { try ExperimentSpec.load(path: kind) }
    }

    @Test("a schedule that names a plugin the app lacks, or floods another than the victim, is refused at the field")
    func problems() throws {
        let path = try Self.write(
            """
            {
              "app": "app.json", "seed": 1, "durationMs": 1000, "load": {"rate": 10},
              "faults": [
                {"kind": "kill", "target": "todoz", "startMs": 10},
                {"kind": "flood", "target": "todos", "startMs": 20},
                {"kind": "pipes", "target": "all", "startMs": 30, "toxics": [{"kind": "latency", "direction": "toPlugin"}]}
              ]
            }
            """)
        let spec = try ExperimentSpec.load(path: path)
        let error = try #require(ExperimentSpec.diagnose(spec.problems(plugins: Self.demoPlugins), path: path))
        let lines = error.diagnostics.map(\.description)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0].hasPrefix("\(path):4:") && lines[0].contains("no plugin 'todoz'"))
        #expect(lines[1].hasPrefix("\(path):5:") && lines[1].contains("only the victim"))
        #expect(lines[2].hasPrefix("\(path):6:") && lines[2].contains("faults[2].toxics[0].latencyMs"))
    }

    @Test(
        "host faults: their target is the host and only theirs; one at a time (a kill under a full disk is refused at its field); the quick form spaces them"
    )
    func hostFaults() throws {
        let path = try Self.write(
            """
            {
              "app": "app.json", "seed": 1, "durationMs": 9000, "load": {"rate": 10},
              "faults": [
                {"kind": "diskFull", "target": "host", "startMs": 1000, "durationMs": 2000},
                {"kind": "hostKill", "target": "host", "startMs": 2500},
                {"kind": "hostKill", "target": "todos", "startMs": 5000},
                {"kind": "kill", "target": "host", "startMs": 6000},
                {"kind": "hostKill", "target": "host", "startMs": 7000, "durationMs": 500}
              ]
            }
            """)
        let spec = try ExperimentSpec.load(path: path)
        let error = try #require(ExperimentSpec.diagnose(spec.problems(plugins: Self.demoPlugins), path: path))
        let lines = error.diagnostics.map(\.description)
        #expect(lines.count == 3, "\(lines)")
        #expect(lines[0].hasPrefix("\(path):5:") && lines[0].contains("overlaps host fault faults[0]"), "\(lines)")
        #expect(lines[1].hasPrefix("\(path):6:") && lines[1].contains("target is the host"), "\(lines)")
        #expect(lines[2].hasPrefix("\(path):7:") && lines[2].contains("only hostKill and diskFull"), "\(lines)")
        let quick = ExperimentSpec.quick(
            manifest: "/app.json", seed: 3, durationMs: 20_000, rate: 50, faultIntervalMs: 2_000,
            kinds: [.hostKill, .diskFull], victim: "profile")
        #expect(quick.faults.allSatisfy { $0.target == .host })
        #expect(quick.faults.contains { $0.kind == .diskFull } && quick.faults.contains { $0.kind == .hostKill })
        #expect(quick.problems(plugins: Self.demoPlugins).isEmpty, "\(quick.problems(plugins: Self.demoPlugins))")
    }

    @Test("the quick form's flags become the same value: a fault every interval, floods on the victim only")
    func quickForm() {
        let spec = ExperimentSpec.quick(
            manifest: "/app.json", seed: 5, durationMs: 10_000, rate: 50, faultIntervalMs: 1_000,
            kinds: [.kill, .stop, .flood], victim: "profile")
        #expect(spec.faults.map(\.startMs) == Array(stride(from: 1_000, to: 10_000, by: 1_000)))
        #expect(spec.faults.allSatisfy { $0.kind != .flood || $0.target == .plugin("profile") })
        #expect(Set(spec.faults.map(\.kind)).count > 1)
        let floods = ExperimentSpec.quick(
            manifest: "/app.json", seed: 5, durationMs: 120_000, rate: 50, faultIntervalMs: 500,
            kinds: [.kill, .flood],
            victim: "profile"
        ).faults.filter { $0.kind == .flood }.map(\.startMs)
        #expect(!floods.isEmpty)
        #expect(zip(floods, floods.dropFirst()).allSatisfy { $1 - $0 >= 10_000 }, "\(floods)")
        #expect(spec.load.rate == 50)
        #expect(spec.problems(plugins: Self.demoPlugins).isEmpty)
    }

    @Test("the same seed gives the same schedule (targets included); another seed another one")
    func sameSeedSameSchedule() {
        func schedule(_ seed: UInt64) -> [ScheduledFault] {
            ExperimentSpec.quick(
                manifest: "/app.json", seed: seed, durationMs: 60_000, rate: 50, faultIntervalMs: 700,
                kinds: [.kill, .stop, .flood], victim: "profile"
            ).schedule(plugins: Self.demoPlugins)
        }
        #expect(schedule(11) == schedule(11))
        #expect(schedule(11) != schedule(12))
        let faults = schedule(11)
        #expect(faults.count == 85)
        // A random target is not hit again while it may still be settling, where another can be chosen.
        for (index, fault) in faults.enumerated() where fault.kind != .flood {
            let recent = faults[..<index].filter { fault.startMs - $0.startMs < 5_000 }.flatMap(\.plugins)
            #expect(!recent.contains(fault.plugins[0]) || Set(recent).count >= Self.demoPlugins.count)
        }
    }

    @Test("targets: a named plugin, several, all; healing times by kind")
    func targets() {
        let spec = ExperimentSpec(
            app: "/a", seed: 1, durationMs: 5_000, load: .init(rate: 1),
            faults: [
                .init(kind: .stop, target: .plugins(["todos", "projects"]), startMs: 300, durationMs: 200),
                .init(kind: .kill, target: .all, startMs: 100),
                .init(kind: .pipes, target: .plugin("todos"), startMs: 200, toxics: [Toxic(.blackhole, .fromPlugin)]),
            ])
        let schedule = spec.schedule(plugins: ["todos", "projects"])
        #expect(schedule.map(\.index) == [1, 2, 0])
        #expect(schedule.map(\.plugins) == [["todos", "projects"], ["todos"], ["todos", "projects"]])
        #expect(schedule.map(\.healMs) == [nil, 1_200, 500])
    }

    @Test("a limits fault: healed after its duration; an empty or bad limit is refused at its field")
    func limits() throws {
        let spec = ExperimentSpec(
            app: "/a", seed: 1, durationMs: 5_000, load: .init(rate: 1),
            faults: [.init(kind: .limits, target: .plugin("todos"), startMs: 100, limits: .init(cpuPercent: 30))])
        let scheduled = spec.schedule(plugins: ["todos"])
        #expect(scheduled.map(\.healMs) == [1_100])
        #expect(scheduled.first?.limits == PluginLimitsRequest.Limits(cpuPercent: 30))
        #expect(spec.problems(plugins: Self.demoPlugins).isEmpty)
        let path = try Self.write(
            """
            {
              "app": "app.json", "seed": 1, "durationMs": 1000, "load": {"rate": 10},
              "faults": [
                {"kind": "limits", "target": "todos", "startMs": 10},
                {"kind": "limits", "target": "todos", "startMs": 20, "limits": {"cpuPercent": 0}}
              ]
            }
            """)
        let bad = try ExperimentSpec.load(path: path)
        let error = try #require(ExperimentSpec.diagnose(bad.problems(plugins: Self.demoPlugins), path: path))
        let lines = error.diagnostics.map(\.description)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines[0].hasPrefix("\(path):4:") && lines[0].contains("faults[0].limits"))
        #expect(lines[1].hasPrefix("\(path):5:") && lines[1].contains("faults[1].limits.cpuPercent"))
    }
}
