import SwitchyardChaos
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// The host's own faults (§22.2): the experiment runs `switchyard run` as a child on a state file, kills it and starts
/// it again, and fills its disk; the host checker judges what it restored and what it said.
@Suite("Host faults in an experiment", .heavy, .timeLimit(.minutes(2)))
struct HostFaultTests {
    @Test(
        "a host killed twice under load restores a tree it published, within the state file's bound, and a full disk is served through and reported"
    )
    func hostKillAndDiskFull() async throws {
        let spec = ExperimentSpec(
            app: LibraryTests.demo, seed: 5, durationMs: 6_000, load: .init(rate: 60, clients: 3),
            faults: [
                .init(kind: .hostKill, target: .host, startMs: 800),
                .init(kind: .diskFull, target: .host, startMs: 1_500, durationMs: 1_000),
                .init(kind: .hostKill, target: .host, startMs: 3_200, durationMs: 300),
            ])
        let outcome = try await ChaosExperiment.run(spec)
        // Values bound first: a failed expectation prints its operands, and the whole history is megabytes.
        let (passed, events, lost) = (outcome.passed, outcome.history.events, outcome.report.lost)
        let hostChecked = outcome.results.contains { $0.checker == .host && $0.passed }
        #expect(passed, "\(ChaosExperiment.violations(outcome))")
        #expect(hostChecked)
        let host = events.filter { $0.type == .host }
        let killed = host.filter { $0.state == "killed" }
        let restarted = host.filter { $0.state == "restarted" }
        #expect(killed.count == 2 && restarted.count == 2, "\(host.map { $0.state ?? "?" })")
        for (kill, restart) in zip(killed, restarted) {
            // The bound, exactly: the file the next host restored is no older than what the host said was written.
            let written = try #require(kill.written)
            let restored = try #require(restart.revision)
            #expect(restored >= written && restart.reason == nil, "\(restart)")
            // The load goes on against the new host: each client sends requests after the last fault step, however
            // late a loaded machine brought the host back.
            let answeredAfter = events.contains { $0.type == .ok && $0.time > restart.time }
            #expect(answeredAfter, "nothing was answered after the restart at \(restart.time) ms")
        }
        let failing = try #require(host.first { $0.state == "stateFileFailing" })
        #expect(failing.reason?.contains("EFBIG") == true, "\(failing)")
        let writtenAgain = host.contains { $0.state == "stateFileWritten" && $0.time > failing.time }
        #expect(writtenAgain)
        #expect(lost == 0)
    }
}
