import SwitchyardChaos
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// The library API a user's Swift test calls (`import SwitchyardChaos`): an experiment as a value, run against the
/// demo app in real processes, asserted on through its checkers' results.
@Suite("Chaos experiments from a Swift test", .heavy, .timeLimit(.minutes(2)))
struct LibraryTests {
    static let demo = "\(packageRoot)/Plugins/demo/switchyard.json"

    @Test("a short experiment (a kill, a stop healed by SIGCONT, sliced pipes) passes every checker")
    func passes() async throws {
        let spec = ExperimentSpec(
            app: Self.demo, seed: 21, durationMs: 3_000, load: .init(rate: 80, clients: 3),
            faults: [
                .init(kind: .kill, target: .plugin("todos"), startMs: 600),
                .init(kind: .stop, target: .random, startMs: 1_200, durationMs: 300),
                .init(
                    kind: .pipes, target: .plugin("projects"), startMs: 300, durationMs: 1_500,
                    toxics: [Toxic(.slicer, .toPlugin, averageSize: 8, delayMs: 1)]),
            ])
        let outcome = try await ChaosExperiment.run(spec)
        let passed = outcome.passed
        #expect(passed, "\(ChaosExperiment.violations(outcome))")
        // Values bound first: a failed expectation prints its operands, and the whole history is megabytes.
        let (checkers, lost, events) = (outcome.results.map(\.checker), outcome.report.lost, outcome.history.events)
        let (operations, faults) = (outcome.history.operations.count, events.filter { $0.type == .fault }.count)
        let healedStop = events.contains { $0.type == .heal && $0.kind == "stop" }
        #expect(checkers == ExperimentSpec.Checker.allCases)
        #expect(lost == 0)
        #expect(operations > 0)
        #expect(faults == 3)
        #expect(healedStop)
    }

    @Test("a slow start and a crash while restoring, each healed, pass every checker; only their targets restart")
    func processFaults() async throws {
        let spec = ExperimentSpec(
            app: Self.demo, seed: 8, durationMs: 3_000, load: .init(rate: 60, clients: 3),
            faults: [
                .init(kind: .slowStart, target: .plugin("todos"), startMs: 300, durationMs: 1_000, startDelayMs: 400),
                .init(kind: .crashOnRestore, target: .plugin("projects"), startMs: 900),
            ])
        let outcome = try await ChaosExperiment.run(spec)
        let passed = outcome.passed
        #expect(passed, "\(ChaosExperiment.violations(outcome))")
        let events = outcome.history.events
        let restarted = Set(
            events.filter { $0.type == .plugin && $0.state == "restarting" }.compactMap(\.plugin))
        #expect(restarted == ["todos", "projects"])
        let healedSlowStart = events.contains { $0.type == .heal && $0.kind == "slowStart" }
        #expect(healedSlowStart)
    }

    @Test("the seeded defect fails the model checker, and only it")
    func defect() async throws {
        // One client: every route the victim answers is then one the model checks (another client's deep link
        // through the victim could take the wrong answer, unchecked, on a slow machine); at least 20 requests, so
        // the defect's phase is reached however slowly they go (a loaded run once sent fewer than 4 in 3 s).
        var spec = ExperimentSpec(
            app: Self.demo, seed: 4, durationMs: 3_000,
            load: .init(rate: 90, clients: 1, mix: .init(chains: 1), minimumRequests: 20),
            faults: [], defect: .init(wrongAnswerEvery: 1_000, phase: 3))
        spec.checkers = [.lost, .model, .verdicts]
        let outcome = try await ChaosExperiment.run(spec)
        let failing = outcome.results.filter { !$0.passed }.map(\.checker)
        #expect(failing == [.model], "\(ChaosExperiment.violations(outcome))")
        #expect(ChaosExperiment.violations(outcome).contains("-wrong"))
    }
}
