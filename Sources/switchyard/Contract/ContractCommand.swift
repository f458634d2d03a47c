import ArgumentParser
import SwitchyardConformance
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// `switchyard contract`: a module's route contract as a versioned artifact (Protocol/README.md §19).
struct ContractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Export, compare and compose plugins' route contracts (what each module promises the others).",
        discussion: """
            A contract is a plugin's route table as a document: its types, routes, params, deep links, actions and \
            tabs, and the other modules' types it opens. Commit it beside the plugin; in the module's CI, export it \
            again and diff it against the last release's (breaking changes fail), and check an app's composition \
            from its modules' contracts without starting anything. Protocol/README.md §19.
            """,
        subcommands: [
            ContractExportCommand.self, ContractDiffCommand.self, ContractCheckCommand.self, ContractRulesCommand.self,
        ]
    )
}

/// `switchyard contract export`: the handshake alone, then the contract of the route table it carried.
struct ContractExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract:
            "Start a plugin for its handshake only and write its contract (deterministic bytes, to commit and diff).",
        discussion: """
            Spawns the plugin as the host does, sends initialize, reads the route table, and ends it with the \
            shutdown ladder (shutdown, exit, end of file, SIGTERM, SIGKILL). The contract goes to stdout, or to \
            --output FILE. A table that does not compose (§14) is refused, with the reasons.

            Examples:
              switchyard contract export -- python3 profile.py > contracts/profile.json
              switchyard contract export --manifest switchyard.json --manifest-entry orders --output contracts/orders.json
            """
    )

    @OptionGroup var plugin: PluginLaunchOptions

    @Option(
        name: [.short, .long],
        help: ArgumentHelp("Write the contract to FILE (atomically) instead of stdout.", valueName: "FILE"))
    var output: String?

    func run() throws {
        let launch = try plugin.launch()
        let contract: RouteContract
        do { contract = try ContractExporter.export(launch) } catch {
            throw RunFailure(
                .failure, message: "cannot export the contract of '\(launch.pluginName)': \(error.description)")
        }
        let bytes = contract.encoded()
        guard let output else {
            StandardOutput.write(String(decoding: bytes, as: UTF8.self))
            return
        }
        do { try FileSystem.writeFileAtomically(output, bytes, mode: 0o644) } catch {
            throw RunFailure(.cannotCreate, message: "cannot write the contract to \(output): \(error)")
        }
        StandardError.write(
            "wrote \(output): plugin '\(contract.plugin.name)' \(contract.plugin.version), \(contract.headline)\n")
    }
}

/// `switchyard contract rules`: the comparison rules, as the spec lists them.
struct ContractRulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "List the rules contract diff classifies changes with (Protocol/README.md §19.3).")

    @Flag(name: .long, help: "Print them as JSON.")
    var json = false

    func run() {
        if json {
            let rules = ContractRule.allCases.map { rule -> JSONValue in
                ["rule": .string(rule.rawValue), "breaking": .bool(rule.isBreaking), "meaning": .string(rule.meaning)]
            }
            StandardOutput.write(JSONWriter.string(.array(rules)) + "\n")
            return
        }
        let width = ContractRule.allCases.map(\.rawValue.count).max() ?? 0
        for rule in ContractRule.allCases {
            let name = rule.rawValue + String(repeating: " ", count: width - rule.rawValue.count)
            StandardOutput.write("\(name)  \(rule.isBreaking ? "breaking  " : "compatible")  \(rule.meaning)\n")
        }
    }
}
