import ArgumentParser
import SwitchyardClient
import SwitchyardProtocol
import SwitchyardSystem

struct UpgradeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Replace a running plugin with a new version, without restarting the app (spec §20.1).",
        discussion: """
            The new version starts beside the old one; its route contract must still support everything the app \
            uses of the plugin, else the upgrade is refused and the old version never stopped serving. Then the \
            plugin's instances move to the new version in one revision (their state through its migration hook), \
            the requests that waited go to it, and the old one stops. A crash of the new version within the \
            probation brings the old one back. Without --command or --product the plugin's own manifest entry is \
            started again (a new build at the same path). Waits for the probation unless --no-wait; the status is 1 \
            when the upgrade was refused, failed or rolled back.
            """)

    @Argument(help: "The plugin's name in the manifest.")
    var plugin: String

    @Option(name: .long, help: "A Swift product of this package as the new version (as a manifest's \"product\").")
    var product: String?

    @Option(name: .long, help: "How long a crash of the new version brings the old one back (default 10000; 0: none).")
    var probationMs: Int?

    @Flag(name: .long, help: "No probation: a crash of the new version restarts it under its restart policy.")
    var noRollback = false

    @Flag(name: .long, help: "Return at the switch instead of waiting for the end of the probation.")
    var noWait = false

    @Flag(name: .long, help: "Print the plugin/upgrade result as JSON.")
    var json = false

    @OptionGroup var client: ClientOptions

    @Option(
        name: .long, parsing: .remaining,
        help: "The new version's argv, everything after it (as a manifest's \"command\"; relative to its folder).")
    var command: [String] = []

    func run() throws {
        let connection = try client.connect()
        let probation = noRollback ? 0 : (probationMs ?? 10_000)
        let wait = !noWait && probation > 0
        // The answer comes after the probation when waiting for it: the call's own deadline allows for it.
        connection.timeoutMilliseconds = client.wait ? -1 : Int32(clamping: 60_000 + (wait ? probation : 0))
        if wait && !json {
            StandardError.write(
                "upgrading \(plugin); then a probation of \(probation) ms (--no-wait returns at once)…\n")
        }
        let result = try control { () throws(ControlClient.Failure) in
            try connection.call(
                PluginUpgradeRequest.self,
                .init(
                    plugin: plugin, command: command.isEmpty ? nil : command, product: product,
                    probationMs: probationMs, noRollback: noRollback ? true : nil, waitForProbation: wait))
        }
        if json {
            StandardOutput.write(
                String(decoding: (try? JSONValueEncoder().encodeBytes(result)) ?? [], as: UTF8.self) + "\n")
        } else {
            StandardOutput.write(Self.describe(result))
        }
        if result.outcome == .rolledBack { throw RunFailure(message: "the upgrade of \(plugin) was rolled back") }
    }

    /// The answer in words: what moved, what waited, what the contract gained, and the probation.
    static func describe(_ result: PluginUpgradeRequest.Result) -> String {
        let pids = "pid \(result.from.pid.map(String.init) ?? "–") → \(result.to.pid.map(String.init) ?? "–")"
        var text =
            "\(result.plugin) \(result.from.version ?? "?") → \(result.to.version ?? "?") (\(pids)): \(result.instances) instances moved in revision \(result.revision); \(result.held.requests) requests waited \(Self.milliseconds(result.held.microseconds))\n"
        for change in result.changes {
            text +=
                "  contract: \(change.breaking ? "breaking, unused" : "compatible") [\(change.rule)] \(change.pointer): \(change.message)\n"
        }
        switch result.probation.state {
        case .off: text += "  no probation\n"
        case .running: text += "  on probation for \(result.probation.milliseconds) ms\n"
        case .passed: text += "  probation of \(result.probation.milliseconds) ms passed\n"
        case .failed: text += "  rolled back: \(result.reason ?? "the new version crashed within its probation")\n"
        }
        return text
    }

    static func milliseconds(_ microseconds: UInt64) -> String {
        let tenths = (microseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10) ms"
    }
}

struct ReloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Read a running host's manifest again and apply what changed (as SIGHUP does; spec §20.2).",
        discussion: """
            Added plugins start and join the app; removed ones leave (refused while their instances are in the \
            tree, unless --force dismisses them first); changed entries are upgraded as by `switchyard upgrade`. A \
            manifest with any error, or a change the app would not compose with, is refused whole: nothing changes. \
            Returns when the reload is done, with what changed.
            """)

    @Flag(name: .long, help: "Dismiss the instances of removed plugins first instead of refusing.")
    var force = false

    @Flag(name: .long, help: "Print the host/reload result as JSON.")
    var json = false

    @OptionGroup var client: ClientOptions

    func run() throws {
        let connection = try client.connect()
        connection.timeoutMilliseconds = client.wait ? -1 : 120_000
        let result: HostReloadRequest.Result
        do {
            result = try connection.call(HostReloadRequest.self, .init(force: force ? true : nil))
        } catch {
            // A manifest's problems print as `run` prints them: file:line:column, the line and a caret.
            if case .response(let refusal) = error, let diagnostics = refusal.data?["diagnostics"]?.arrayValue {
                let lines = diagnostics.compactMap(\.stringValue).joined(separator: "\n")
                throw RunFailure(
                    .dataError, message: lines + "\nswitchyard: error: reload refused; nothing changed", formatted: true
                )
            }
            throw RunFailure(message: error.withDetails)
        }
        if json {
            StandardOutput.write(
                String(decoding: (try? JSONValueEncoder().encodeBytes(result)) ?? [], as: UTF8.self) + "\n")
            return
        }
        var text = "reloaded \(result.manifest)\n"
        if !result.dismissed.isEmpty {
            text += "  dismissed: \(result.dismissed.map { "#\($0.rawValue)" }.joined(separator: ", "))\n"
        }
        for plugin in result.added {
            text +=
                "  added: \(plugin.name) (\(plugin.residency ?? plugin.state)\(plugin.version.map { ", v\($0)" } ?? ""))\n"
        }
        for name in result.removed { text += "  removed: \(name)\n" }
        for upgrade in result.upgraded { text += "  upgraded: " + UpgradeCommand.describe(upgrade) }
        for name in result.reconfigured { text += "  reconfigured: \(name)\n" }
        for failure in result.failed { text += "  failed: \(failure.plugin) — \(failure.error.message)\n" }
        if !result.unchanged.isEmpty { text += "  unchanged: \(result.unchanged.joined(separator: ", "))\n" }
        StandardOutput.write(text)
        if !result.failed.isEmpty { throw RunFailure(message: "\(result.failed.count) changes could not be applied") }
    }
}
