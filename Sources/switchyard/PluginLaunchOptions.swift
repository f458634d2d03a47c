import ArgumentParser
import SwitchyardConformance
import SwitchyardHost

/// How a command that starts one plugin on its own (`check-plugin`, `contract export`) is told which: a manifest
/// entry (its command, environment, folder and limits, as the host would start it), or a command after `--`.
struct PluginLaunchOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The manifest --manifest-entry NAME is read from (default: switchyard.json here).", valueName: "FILE"),
        completion: .file(extensions: ["json"]))
    var manifest: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Take the plugin's command, environment, folder and limits from a manifest entry: NAME (of --manifest), or FILE:NAME (the command after -- overrides its command).",
            valueName: "NAME"))
    var manifestEntry: String?

    @Option(
        name: .long, help: "The plugin's manifest name, sent in initialize (default: the entry's name, else 'plugin').")
    var name: String?

    @Argument(
        parsing: .postTerminator,
        help: ArgumentHelp("The plugin's command and its arguments, after --.", valueName: "COMMAND"))
    var command: [String] = []

    /// The plugin as the host would start it.
    func launch() throws -> PluginLaunch {
        guard let manifestEntry else {
            guard !command.isEmpty else {
                throw ValidationError(
                    "give the plugin's command after --, or --manifest-entry NAME (with --manifest FILE) or FILE:NAME")
            }
            let pluginName = name ?? "plugin"
            return PluginLaunch(
                command: command, environment: Manifest.pluginEnvironment(name: pluginName), pluginName: pluginName)
        }
        var path = manifest ?? "switchyard.json"
        var entry = manifestEntry
        if manifest == nil, let colon = manifestEntry.lastIndex(of: ":") {
            path = String(manifestEntry[..<colon])
            entry = String(manifestEntry[manifestEntry.index(after: colon)...])
        }
        guard !path.isEmpty, !entry.isEmpty else {
            throw ValidationError(
                "--manifest-entry takes NAME (with --manifest FILE) or FILE:NAME, e.g. Plugins/demo/switchyard.json:todos"
            )
        }
        let spec: PluginLaunchSpec
        do {
            spec = try Manifest.load(path: path).launchSpec(plugin: entry)
        } catch {
            throw RunFailure(error)
        }
        var environment = spec.environment
        if let name { environment["SWITCHYARD_PLUGIN_NAME"] = name }
        return PluginLaunch(
            command: command.isEmpty ? spec.command : command, environment: environment,
            directory: spec.workingDirectory,
            pluginName: name ?? entry, limits: spec.limits, startTimeoutMs: spec.startTimeoutMs)
    }
}
