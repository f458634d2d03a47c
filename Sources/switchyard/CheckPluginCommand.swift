import ArgumentParser
import SwitchyardConformance
import SwitchyardProtocol
import SwitchyardSystem

/// `switchyard check-plugin`: runs one plugin executable on its own through the conformance checks.
struct CheckPluginCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-plugin",
        abstract: "Check a plugin executable against the protocol (Protocol/README.md), no app needed.",
        discussion: """
            Starts the plugin (several times: some checks need a process of their own) and plays the host: the \
            handshake, every coordinator type created, every route taken with params generated from its \
            declaration, every deep-link pattern followed, pings, shutdown, exit, end of file, restore. Each check \
            cites the section of Protocol/README.md it enforces; a FAIL shows the lines sent and received and what \
            was expected. The exit status is non-zero when a check fails (WARN and SKIP do not fail).

            Example: switchyard check-plugin -- python3 Plugins/python/hello.py
            """
    )

    @Flag(name: .long, help: "Print the report as one JSON document on stdout.")
    var json = false

    @Option(
        name: .long, help: ArgumentHelp("Run only these checks (comma-separated ids; see --list).", valueName: "CHECKS")
    )
    var only: String?

    @OptionGroup var plugin: PluginLaunchOptions

    @Option(name: .long, help: "How many route round trips the timing check measures.")
    var samples = 100

    @Flag(name: .long, help: "List the checks with the spec section each enforces, and exit.")
    var list = false

    func run() throws {
        if list {
            for id in CheckID.allCases { StandardOutput.write("\(id.rawValue)\t\(id.section)\t\(id.title)\n") }
            return
        }
        let report = ConformanceChecker.run(
            try plugin.launch(), options: CheckOptions(only: try selection(), timingSamples: max(1, samples)))
        StandardOutput.write(json ? JSONWriter.string(report.json()) + "\n" : report.text())
        if report.failed { throw ExitCode(1) }
    }

    private func selection() throws -> Set<CheckID> {
        guard let only else { return Set(CheckID.allCases) }
        var selected = Set<CheckID>()
        for text in only.split(separator: ",").map({ String($0.filter { !$0.isWhitespace }) }) where !text.isEmpty {
            guard let id = CheckID(rawValue: text) else {
                throw ValidationError(
                    "--only: no check '\(text)' (checks: \(CheckID.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            selected.insert(id)
        }
        guard !selected.isEmpty else { throw ValidationError("--only names no check") }
        return selected
    }
}
