import SwitchyardChaos
import SwitchyardHost
import SwitchyardSystem

extension ChaosCommand {
    /// `switchyard chaos --check PATH`: the checkers that need only the history, run again on a saved one (a run's
    /// folder or its `history.jsonl`). A violation exits 1 with the seed and the replay command, as a live run does;
    /// a file that cannot be read or a line that is not an event is an error at its `file:line:column` (66, 65).
    func checkSaved(_ path: String) throws {
        let history = FileSystem.isDirectory(path) ? "\(path)/history.jsonl" : path
        let folder = FileSystem.parentDirectory(
            of: history.hasPrefix("/") ? history : "\(FileSystem.currentDirectory)/\(history)")
        let loaded: History
        do { loaded = try History.load(path: history) } catch { throw RunFailure(error) }
        // The experiment saved beside it gives the seed, the checkers it asked for and the replay.
        var spec: ExperimentSpec?
        let experiment = "\(folder)/experiment.json"
        if FileSystem.exists(experiment) {
            do { spec = try ExperimentSpec.load(path: experiment) } catch { throw RunFailure(error) }
        }
        let (results, skipped) = HistoryCheckers.checkSaved(
            loaded, checkers: spec?.enabledCheckers ?? ExperimentSpec.Checker.allCases)
        let seed = spec.map { "seed \($0.seed)" } ?? "seed unknown (no experiment.json beside it)"
        StandardOutput.write(
            "switchyard chaos --check: \(history)\n  \(loaded.events.count) events, \(loaded.operations.count) operations, \(seed)\n"
        )
        Self.printCheckers(results)
        for skip in skipped { StandardOutput.write("  \(skip.checker.rawValue.padding(10)) skipped  \(skip.reason)\n") }
        guard results.allSatisfy(\.passed) else {
            throw Self.failure(
                results, seed: spec?.seed, replay: spec.map { _ in Self.replayCommand(folder: folder) })
        }
    }
}
