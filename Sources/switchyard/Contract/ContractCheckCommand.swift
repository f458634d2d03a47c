import ArgumentParser
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// `switchyard contract check`: an app's composition judged from its modules' contracts alone, by the composition the
/// host runs at start (§14), with no process started.
struct ContractCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check that an app's modules compose, from their contracts alone: nothing is started.",
        discussion: """
            Reads the manifest and one contract per plugin: --contract PLUGIN=FILE, else the entry's "contract" \
            member, else contracts/PLUGIN.json beside the manifest that declares the entry. Then runs the host's own \
            composition (Protocol/README.md §14) over them: every route into another module must name a type it \
            declares, of a kind it can present, created with params it takes; the manifest's root must exist. Each \
            problem names the module, type, route and param, at its place in the contract. Status 1 if any.

            Example, in module A's CI with module B's published contract:
              switchyard contract check --manifest app.json --contract b=vendor/b/contracts/b.json
            """
    )

    @OptionGroup var manifestOptions: ManifestOptions

    @Option(
        name: .long, parsing: .singleValue,
        help: ArgumentHelp(
            "The contract of PLUGIN (a manifest entry's name) is FILE, wherever the manifest would look (repeatable).",
            valueName: "PLUGIN=FILE"))
    var contract: [String] = []

    @Flag(name: .long, help: "Print one JSON document on stdout.")
    var json = false

    func run() throws {
        let manifestPath = try manifestOptions.path()
        let manifest = try manifestOptions.load()
        let given = try overrides(names: manifest.plugins.map(\.name))
        var files: [(entry: String, file: ContractFile)] = []
        var missing: [String] = []
        for entry in manifest.plugins {
            let path = given[entry.name] ?? entry.contractPath
            guard FileSystem.exists(path) else {
                missing.append(
                    """
                    \(path): error: no contract for plugin '\(entry.name)'
                      export it: switchyard contract export --manifest \(manifestPath) --manifest-entry \(entry.name) --output \(path)
                      or name another file: --contract \(entry.name)=FILE, or the entry's "contract" member
                    """)
                continue
            }
            files.append((entry.name, try ContractFile.read(path)))
        }
        guard missing.isEmpty else {
            throw RunFailure(.noInput, message: missing.joined(separator: "\n"), formatted: true)
        }

        let root = manifest.root.map { RouteRegistry.TypeKey(plugin: $0.plugin ?? "", type: $0.type) }
        let report = Composition.check(
            tables: files.map { ($0.entry, $0.file.contract.coordinators) },
            declaredPlugins: manifest.plugins.map(\.name), root: root)
        let located = report.issues.map { issue in (issue, locate(issue, in: files)) }
        let errors = report.issues.count { $0.severity == .error }
        if json {
            StandardOutput.write(
                JSONWriter.string(document(manifest: manifestPath, files: files, located: located, passed: errors == 0))
                    + "\n")
        } else {
            for (issue, place) in located {
                let path = place?.file.path ?? manifestPath
                let severity: ManifestDiagnostic.Severity = issue.severity == .error ? .error : .warning
                StandardOutput.write(
                    ManifestDiagnostic(
                        path: path, severity: severity, message: "\(issue.location): \(issue.reason)",
                        position: place?.position
                    ).description + "\n")
            }
            let modules = files.map { "\($0.entry) \($0.file.contract.plugin.version)" }.joined(separator: ", ")
            let references = files.reduce(0) { count, module in
                count + module.file.contract.references.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } }
            }
            StandardOutput.write(
                errors == 0
                    ? "contract check: \(files.count) modules compose (\(modules)); \(references) route\(references == 1 ? "" : "s") into other modules resolve\n"
                    : "contract check: \(errors) problem\(errors == 1 ? "" : "s"): the host would leave out \(report.excluded.isEmpty ? "nothing, but cannot start" : report.excluded.joined(separator: ", "))\n"
            )
        }
        if errors > 0 { throw ExitCode(1) }
    }

    /// `--contract PLUGIN=FILE`, each naming a plugin of the manifest.
    private func overrides(names: [String]) throws -> [String: String] {
        var given: [String: String] = [:]
        for item in contract {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex,
                item.index(after: equals) != item.endIndex
            else {
                throw ValidationError("--contract takes PLUGIN=FILE, e.g. --contract todos=contracts/todos.json")
            }
            let plugin = String(item[..<equals])
            guard names.contains(plugin) else {
                throw ValidationError(
                    "--contract \(item): the manifest has no plugin '\(plugin)' (plugins: \(names.joined(separator: ", ")))"
                )
            }
            given[plugin] = String(item[item.index(after: equals)...])
        }
        return given
    }

    /// The place in a contract an issue is about: its param, else its route, else its type.
    private func locate(
        _ issue: CompositionIssue, in files: [(entry: String, file: ContractFile)]
    ) -> (file: ContractFile, position: TextPosition?)? {
        guard issue.category != .root, let file = files.first(where: { $0.entry == issue.plugin })?.file else {
            return nil
        }
        guard let type = issue.type else { return (file, nil) }
        var pointer = issue.route.map { JSONPointer.route(type, $0) } ?? .type(type)
        if let param = issue.param {
            pointer = pointer.appending(issue.category == .params ? "targetParams" : "params", param)
        }
        return (file, file.nearestPosition(of: pointer))
    }

    private func document(
        manifest: String, files: [(entry: String, file: ContractFile)],
        located: [(CompositionIssue, (file: ContractFile, position: TextPosition?)?)],
        passed: Bool
    ) -> JSONValue {
        [
            "manifest": .string(manifest), "passed": .bool(passed),
            "modules": .array(
                files.map { module in
                    [
                        "plugin": .string(module.entry), "contract": .string(module.file.path),
                        "version": .string(module.file.contract.plugin.version),
                    ]
                }),
            "issues": .array(
                located.map { issue, place in
                    var object: JSONObject = [
                        "severity": .string(issue.severity.rawValue), "category": .string(issue.category.rawValue),
                        "plugin": .string(issue.plugin),
                        "reason": .string(issue.reason),
                    ]
                    if let type = issue.type { object["type"] = .string(type) }
                    if let route = issue.route { object["route"] = .string(route) }
                    if let param = issue.param { object["param"] = .string(param) }
                    if let place {
                        object["file"] = .string(place.file.path)
                        if let position = place.position {
                            object["line"] = .int(Int64(position.line))
                            object["column"] = .int(Int64(position.column))
                        }
                    }
                    return .object(object)
                }),
        ]
    }
}
