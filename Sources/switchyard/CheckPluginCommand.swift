import ArgumentParser
import SwitchyardConformance
import SwitchyardHost
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

    @Option(name: .long, help: ArgumentHelp("Run only these checks (comma-separated ids; see --list).", valueName: "CHECKS"))
    var only: String?

    @Option(name: .long, help: ArgumentHelp(
        "Take the plugin's command, environment and limits from a manifest entry (the command after -- overrides its command).",
        valueName: "FILE:NAME"))
    var manifestEntry: String?

    @Option(name: .long, help: "The plugin's manifest name, sent in initialize (default: the entry's name, else 'plugin').")
    var name: String?

    @Option(name: .long, help: "Route round trips the timing check measures.")
    var samples = 100

    @Flag(name: .long, help: "List the checks with the spec section each enforces, and exit.")
    var list = false

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The plugin's command and its arguments, after --.", valueName: "COMMAND"))
    var command: [String] = []

    func run() throws {
        if list {
            for id in CheckID.allCases { StandardOutput.write("\(id.rawValue)\t\(id.section)\t\(id.title)\n") }
            return
        }
        let report = ConformanceChecker.run(try launch(), options: CheckOptions(only: try selection(), timingSamples: max(1, samples)))
        StandardOutput.write(json ? JSONWriter.string(report.json()) + "\n" : report.text())
        if report.failed { throw ExitCode(1) }
    }

    private func selection() throws -> Set<CheckID> {
        guard let only else { return Set(CheckID.allCases) }
        var selected = Set<CheckID>()
        for text in only.split(separator: ",").map({ String($0.filter { !$0.isWhitespace }) }) where !text.isEmpty {
            guard let id = CheckID(rawValue: text) else {
                throw ValidationError("--only: no check '\(text)' (checks: \(CheckID.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            selected.insert(id)
        }
        guard !selected.isEmpty else { throw ValidationError("--only names no check") }
        return selected
    }

    private func launch() throws -> PluginLaunch {
        guard let manifestEntry else {
            guard !command.isEmpty else { throw ValidationError("give the plugin's command after --, or --manifest-entry FILE:NAME") }
            let pluginName = name ?? "plugin"
            return PluginLaunch(command: command, environment: Manifest.pluginEnvironment(name: pluginName), pluginName: pluginName)
        }
        guard let colon = manifestEntry.lastIndex(of: ":"), colon != manifestEntry.startIndex,
            manifestEntry.index(after: colon) != manifestEntry.endIndex
        else { throw ValidationError("--manifest-entry takes FILE:NAME, e.g. Plugins/demo/switchyard.json:todos") }
        let entryName = String(manifestEntry[manifestEntry.index(after: colon)...])
        let spec: PluginLaunchSpec
        do {
            spec = try Manifest.load(path: String(manifestEntry[..<colon])).launchSpec(plugin: entryName)
        } catch {
            throw RunFailure(error)
        }
        var environment = spec.environment
        if let name { environment["SWITCHYARD_PLUGIN_NAME"] = name }
        return PluginLaunch(
            command: command.isEmpty ? spec.command : command, environment: environment, directory: spec.workingDirectory,
            pluginName: name ?? entryName, limits: spec.limits, startTimeoutMs: spec.startTimeoutMs)
    }
}
