import SwitchyardProtocol
import SwitchyardSpec
import SwitchyardTestSupport
import Testing

/// `plugin/limits` (spec §22.5) as values: what its parameters refuse, naming the field, and that its Swift types
/// encode as its schema says.
@Suite("plugin/limits parameters", .timeLimit(.minutes(1)))
struct PluginLimitsTests {
    typealias Params = PluginLimitsRequest.Params

    @Test("each bad parameter is refused naming its field; healing and sound limits are taken")
    func problems() {
        let cases: [(Params, Int, String?)] = [
            (Params(plugin: "p"), 700, nil),
            (Params(plugin: "p", memoryBytes: 0, cpuPercent: 40, cpuPeriodMs: 100, descriptors: 0), 700, nil),
            (Params(plugin: "p", memoryBytes: -1), 700, "memoryBytes"),
            (Params(plugin: "p", descriptors: -5), 700, "descriptors"),
            (Params(plugin: "p", cpuPercent: 0), 700, "cpuPercent"),
            (Params(plugin: "p", cpuPercent: 100), 700, "cpuPercent"),
            (Params(plugin: "p", cpuPeriodMs: 100), 700, "cpuPeriodMs"),
            (Params(plugin: "p", cpuPercent: 50, cpuPeriodMs: 5), 700, "cpuPeriodMs"),
            // Held 99 ms of every 100 (the default period): over a quarter of a 300 ms timeout, the share is to blame.
            (Params(plugin: "p", cpuPercent: 1), 300, "cpuPercent"),
            // Held 500 ms of every 1,000: over a quarter of 700 ms, the period is to blame.
            (Params(plugin: "p", cpuPercent: 50, cpuPeriodMs: 1_000), 700, "cpuPeriodMs"),
            // Held exactly a quarter of the timeout: taken.
            (Params(plugin: "p", cpuPercent: 50, cpuPeriodMs: 350), 700, nil),
            // Without a heartbeat there is no deadline to miss.
            (Params(plugin: "p", cpuPercent: 1, cpuPeriodMs: 10_000), 0, nil),
        ]
        for (params, timeout, field) in cases {
            #expect(params.problem(heartbeatTimeoutMs: timeout)?.field == field, "\(params), timeout \(timeout)")
        }
    }

    @Test("params and results encode as plugin.limits.json says")
    func schema() throws {
        let validator = SchemaValidator(directory: SchemaTests.schemaDirectory)
        let params = Params(plugin: "profile", memoryBytes: 1 << 24, cpuPercent: 30, cpuPeriodMs: 200, descriptors: 8)
        #expect(try validator.validate(try Coding.encode(params), against: "plugin.limits.json#/$defs/params") == [])
        for mechanism in PluginLimitsRequest.Mechanism.allCases {
            let result = PluginLimitsRequest.Result(pid: 42, memory: mechanism, cpu: mechanism, descriptors: .rlimit)
            #expect(
                try validator.validate(try Coding.encode(result), against: "plugin.limits.json#/$defs/result") == [])
        }
        #expect(
            try validator.validate(["plugin": "p", "cpuPercent": 100], against: "plugin.limits.json#/$defs/params")
                != [])
    }
}
