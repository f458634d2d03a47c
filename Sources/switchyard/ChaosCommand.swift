import ArgumentParser
import Logging
import SwitchyardChaos
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem

/// `switchyard chaos`: an app under load while a schedule of faults hits its plugins; a history of every request,
/// checkers over it, and a report. An experiment file (`--experiment`) or the flags (the quick form) describe it;
/// both become one ``ExperimentSpec``.
struct ChaosCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chaos",
        abstract: "Run an app under load while faults hit its plugins; check the history; report.",
        discussion: """
            With --experiment FILE (Protocol/README.md §22.2) the file says everything: the app, the load, the \
            faults with their targets and times, the checkers, the seed. Without it the flags are the quick form: \
            the demo app (or --manifest), one fault every --fault-interval-ms of a kind in --faults on a random \
            plugin. One plugin (--victim, default profile) is played by the misbehaving plugin. Every request is \
            recorded in OUT/history.jsonl (invoke, then ok, fail or info); the checkers judge it (§22.3). A \
            failing checker prints the seed and the command that replays the same schedule: the experiment is \
            saved as OUT/experiment.json. Choices follow the seed; timings are the machine's. --report DIR adds \
            report.html, a page that works offline: latency and throughput with each fault's window shaded, the \
            plugins' states, the checkers (§22.6). --check PATH runs the checkers that need only the history on a \
            saved run (its folder or its history.jsonl) and starts nothing.
            """)

    @OptionGroup var manifest: ManifestOptions

    @Option(
        name: .long,
        help: ArgumentHelp("The experiment file to run (JSON, schema/experiment.schema.json).", valueName: "FILE"))
    var experiment: String?

    @Option(
        name: .long, help: ArgumentHelp("Runs again the experiment an earlier run saved in DIR.", valueName: "DIR"))
    var replay: String?

    @Option(
        name: .long,
        help: ArgumentHelp("Where history.jsonl, experiment.json and report.json are written.", valueName: "DIR"))
    var out: String?

    @Option(name: .long, help: "How many seconds the load lasts (quick form).")
    var duration: Double = 60

    @Option(
        name: .long,
        help:
            "The seed every choice is drawn from (requests, faults, targets); with --experiment, it overrides the file's."
    )
    var seed: UInt64?

    @Option(name: .long, help: "How many requests are sent per second (quick form).")
    var rate: Int = 200

    @Option(name: .long, help: "How many milliseconds pass between two faults (quick form).")
    var faultIntervalMs: Int = 2_000

    @Option(
        name: .long,
        help:
            "The kinds of fault to inject, comma-separated: kill, stop, flood, slowStart, crashOnRestore, hostKill, diskFull (quick form; pipes and limits need an experiment file)."
    )
    var faults: String = "kill,stop,flood"

    @Option(name: .long, help: "The demo plugin whose place the misbehaving plugin takes (quick form).")
    var victim: String = "profile"

    @Option(name: .long, help: "A request without an answer after this long is lost (quick form).")
    var requestDeadlineMs: Int = 30_000

    @Option(name: .long, help: ArgumentHelp("Also write the report as JSON to FILE.", valueName: "FILE"))
    var reportJSON: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Write report.html (charts with the fault windows, plugin states, checkers; offline), report.json and history.jsonl to DIR.",
            valueName: "DIR"))
    var report: String?

    @Flag(name: .long, help: "Print a progress line every 2 s on stderr (the default when stderr is a terminal).")
    var progress = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Check a saved history (a run's folder or its history.jsonl) again with the checkers that need only the history; runs nothing.",
            valueName: "PATH"))
    var check: String?

    @Option(
        name: .long, help: "The host logs at this level (default: error, so that the report stands out).",
        transform: { text in
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw ValidationError("unknown log level '\(text)'")
            }
            return level
        })
    var logLevel: Logger.Level = .error

    /// The experiment the arguments describe, and the file it came from (nil: the quick form).
    func experimentSpec() throws -> (spec: ExperimentSpec, file: String?) {
        if let file = experiment ?? replay.map({ "\($0)/experiment.json" }) {
            var spec: ExperimentSpec
            do { spec = try ExperimentSpec.load(path: file) } catch { throw RunFailure(error) }
            if let seed { spec.seed = seed }
            return (spec, file)
        }
        var kinds: [ExperimentSpec.Fault.Kind] = []
        for word in faults.split(separator: ",").map({ String($0).trimmingWhitespace }) {
            guard let kind = ExperimentSpec.Fault.Kind(rawValue: word), kind != .pipes, kind != .limits else {
                let quick = ExperimentSpec.Fault.Kind.allCases.filter { $0 != .pipes && $0 != .limits }
                throw ValidationError(
                    "--faults takes \(quick.map(\.rawValue).joined(separator: ", ")), not '\(word)' (pipes and limits need an experiment file: --experiment)"
                )
            }
            kinds.append(kind)
        }
        var spec = ExperimentSpec.quick(
            manifest: try manifest.path(), seed: seed ?? 1, durationMs: Int(duration * 1_000), rate: rate,
            faultIntervalMs: faultIntervalMs, kinds: kinds, victim: victim)
        spec.requestDeadlineMs = requestDeadlineMs
        return (spec, nil)
    }

    func run() async throws {
        if let check { return try checkSaved(check) }
        let level = logLevel
        LoggingSystem.bootstrap { label in SwitchyardLogHandler(label: label, level: level) }
        let logger = Logger(label: "switchyard")
        let (spec, file) = try experimentSpec()
        let folder = try makeFolder(out ?? report ?? defaultFolder)
        let reportFolder = try report.map(makeFolder)
        // Saved first, so even a run that ends badly can be replayed.
        try write("\(folder)/experiment.json", JSONWriter.string(try Coding.encode(spec)) + "\n")
        // A line every 2 s where a person watches (or when asked): the summary alone would leave a minute silent.
        var showProgress: (@Sendable (ChaosProgress) -> Void)?
        if progress || Terminal.isTerminal(2) {
            showProgress = { status in StandardError.write(status.line + "\n") }
        }
        let outcome: ChaosExperiment.Outcome
        do {
            outcome = try await ChaosExperiment.run(
                spec, file: file, allowUnknownKeys: manifest.allowUnknownKeys, logger: logger, progress: showProgress)
        } catch {
            switch error {
            case .invalid(let error): throw RunFailure(error)
            case .hostDidNotStart(let reason): throw RunFailure(.unavailable, message: reason)
            }
        }

        let command = CommandLine.arguments.joined(separator: " ")
        let document = ChaosReportDocument(
            outcome: outcome, command: command, replay: Self.replayCommand(folder: folder))
        try write("\(folder)/history.jsonl", outcome.history.jsonl)
        try write("\(folder)/report.json", document.json)
        if let reportJSON { try write(reportJSON, document.json) }
        if let reportFolder {
            if reportFolder != folder {
                try write("\(reportFolder)/history.jsonl", outcome.history.jsonl)
                try write("\(reportFolder)/report.json", document.json)
            }
            try write("\(reportFolder)/report.html", document.html)
        }
        StandardOutput.write(outcome.report.text(command: command))
        Self.printCheckers(outcome.results)
        StandardOutput.write("  history: \(folder)/history.jsonl\n")
        if let reportFolder { StandardOutput.write("  report: \(reportFolder)/report.html\n") }
        guard outcome.passed else {
            throw Self.failure(outcome.results, seed: spec.seed, replay: Self.replayCommand(folder: folder))
        }
    }

    static func printCheckers(_ results: [CheckerResult]) {
        StandardOutput.write("\n  checkers\n")
        for result in results {
            StandardOutput.write(
                "  \(result.checker.rawValue.padding(10)) \(result.passed ? "ok" : "FAILED")  \(result.summary)\n")
            for violation in result.violations.prefix(10) { StandardOutput.write("      \(violation)\n") }
        }
    }

    /// Prints the seed and the replay command of a failed check, and the failure that ends the command (status 1).
    static func failure(_ results: [CheckerResult], seed: UInt64?, replay: String?) -> RunFailure {
        let failed = results.filter { !$0.passed }.map(\.checker.rawValue).joined(separator: ", ")
        let seedText = seed.map { "seed \($0)" } ?? "an unknown seed (no experiment.json beside the history)"
        StandardOutput.write(
            "\n  \(failed) failed with \(seedText)"
                + (replay.map { "; replay the same schedule with:\n    \($0)\n" } ?? "\n"))
        return RunFailure(message: "checkers failed: \(failed) (\(seedText))")
    }

    /// The command that runs the saved experiment again: the same app, load, schedule and seed.
    static func replayCommand(folder: String) -> String {
        let program = CommandLine.arguments.first ?? "switchyard"
        return "\(program) chaos --experiment \(folder)/experiment.json --out \(folder)/replay"
    }

    private var defaultFolder: String {
        "\(SystemProcess.environmentValue("TMPDIR") ?? "/tmp")/switchyard-chaos-\(SystemProcess.currentPID)"
    }

    /// `folder`, created if missing, as an absolute path.
    private func makeFolder(_ folder: String) throws -> String {
        if !FileSystem.isDirectory(folder) {
            do { try FileSystem.makeDirectory(folder, mode: 0o755) } catch {
                throw RunFailure(message: "cannot create \(folder): \(error)")
            }
        }
        return folder.hasPrefix("/") ? folder : "\(FileSystem.currentDirectory)/\(folder)"
    }

    func write(_ path: String, _ text: String) throws {
        do { try FileSystem.writeFileAtomically(path, Array(text.utf8), mode: 0o644) } catch {
            throw RunFailure(message: "cannot write \(path): \(error)")
        }
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
