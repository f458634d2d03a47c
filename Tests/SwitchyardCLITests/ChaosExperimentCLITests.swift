import Glibc
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// `switchyard chaos` as a user runs it (§22): an experiment file, its history and checkers, and the replay of a
/// failing run from the command it prints.
@Suite("switchyard chaos experiments", .heavy, .timeLimit(.minutes(3)))
struct ChaosExperimentCLITests {
    /// Runs `switchyard chaos` to its end (generous limit: a time limit, not a measurement); killed if it overruns,
    /// so a failing test leaves no experiment running.
    static func chaos(_ arguments: [String]) async throws -> (status: Int32?, stdout: [String], stderr: [String]) {
        let cli = try CLIProcess(["chaos"] + arguments)
        cli.closeStdin()
        let status: Int32
        do { status = try await cli.waitForExit(seconds: 120) } catch {
            cli.signal(SIGKILL)
            _ = try? await cli.waitForExit(seconds: 10)
            throw error
        }
        return (status, cli.stdout, cli.stderr)
    }

    @Test(
        "the seeded defect (one route in a thousand answered wrong) is caught by the model checker, and the printed replay command reproduces it"
    )
    func seededDefect() async throws {
        let folder = try TestSweep.temporaryDirectory()
        let first = try await Self.chaos([
            "--experiment", "\(packageRoot)/Plugins/demo/experiments/seeded-defect.json", "--out", folder,
        ])
        #expect(first.status == 1, "\(first.stdout.suffix(20)) \(first.stderr.suffix(10))")
        #expect(first.stdout.contains { $0.contains("model") && $0.contains("FAILED") }, "\(first.stdout)")
        #expect(first.stdout.contains { $0.contains("-wrong") })
        #expect(first.stdout.contains { $0.contains("model failed with seed 3; replay the same schedule with:") })
        let command = try #require(
            first.stdout.last { $0.contains(" chaos --experiment ") }.map { String($0.drop { $0 == " " }) },
            "\(first.stdout)")
        #expect(command.hasSuffix("chaos --experiment \(folder)/experiment.json --out \(folder)/replay"))
        let arguments = command.split(separator: " ").map(String.init).drop { $0 != "chaos" }.dropFirst()
        let replay = try await Self.chaos(Array(arguments))
        #expect(replay.status == 1, "\(replay.stdout.suffix(20))")
        #expect(replay.stdout.contains { $0.contains("model") && $0.contains("FAILED") })
        #expect(replay.stdout.contains { $0.contains("-wrong") }, "\(replay.stdout)")
        #expect(replay.stdout.contains { $0.contains("model failed with seed 3") })
        let history = try FileSystem.readFile("\(folder)/replay/history.jsonl")
        #expect(history.count > 0)
    }

    @Test("an experiment file with a mistake is refused before anything starts, at its line and field")
    func badFile() async throws {
        let folder = try TestSweep.temporaryDirectory()
        let path = "\(folder)/bad.json"
        try FileSystem.writeFileAtomically(
            path,
            Array(
                """
                {"app": "\(packageRoot)/Plugins/demo/switchyard.json", "seed": 1, "durationMs": 1000,
                 "load": {"rate": 10}, "faults": [{"kind": "kill", "target": "todoz", "startMs": 0}]}
                """.utf8))
        let result = try await Self.chaos(["--experiment", path, "--out", folder])
        #expect(result.status == 65)
        #expect(
            result.stderr.contains { $0.hasPrefix("\(path):2:") && $0.contains("faults[0].target") }, "\(result.stderr)"
        )
        #expect(!FileSystem.exists("\(folder)/history.jsonl"))
    }
}
