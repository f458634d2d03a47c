import Glibc
public import SwitchyardNavigation
import SwitchyardProtocol

/// Why a plugin's contract could not be exported: it could not be started, did not complete the handshake, or
/// declared a table that does not compose; with the plugin's last stderr lines.
public struct ContractExportFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public let message: String
    /// The composition problems of its table, one per line, when that is the reason.
    public let problems: [String]
    /// The plugin's last stderr lines, when it ran.
    public let stderr: [String]

    public var description: String {
        var text = message
        for problem in problems { text += "\n  \(problem)" }
        if !stderr.isEmpty { text += "\n  stderr (last lines):\n" + stderr.map { "    \($0)" }.joined(separator: "\n") }
        return text
    }
}

/// `switchyard contract export`: the handshake alone, as the host has it (§3: spawn, `initialize`, `initialized`,
/// then the shutdown ladder: `shutdown`, `exit`, end of file, `SIGTERM`, `SIGKILL`), and the contract of the route
/// table it carried (Protocol/README.md §19).
public enum ContractExporter {
    /// Starts the plugin as `launch` says, reads its route table in the handshake, ends it, and returns its contract.
    public static func export(_ launch: PluginLaunch) throws(ContractExportFailure) -> RouteContract {
        let session: PluginSession
        do { session = try PluginSession(launch) } catch {
            throw ContractExportFailure(
                message: "cannot start \(launch.command.first ?? "the plugin"): \(error)", problems: [], stderr: [])
        }
        defer { session.end() }
        let (reply, result) = session.ready()
        guard let result else {
            let reason: String
            switch session.decode(reply, as: InitializeRequest.Result.self, method: InitializeRequest.method) {
            case .success(let answer):
                reason =
                    "it chose protocol version \(answer.protocolVersion), which was not offered (\(ProtocolVersion.supported))"
            case .failure(.plugin(let error)):
                reason = "it answered \(error.code.rawValue) \(error.code.name): \(error.message)"
            case .failure(.host(let error)): reason = error.message
            case .failure(.none(let reply)): reason = reply.description
            }
            // A plugin that closed its stdout usually exited: what it wrote on the way out is the reason.
            let stderr: [String]
            if case .ended = reply { stderr = session.finalStderrTail() } else { stderr = session.stderrTail }
            throw ContractExportFailure(
                message: "the plugin did not complete the handshake (§3): \(reason)", problems: [], stderr: stderr)
        }
        let problems = tableProblems(plugin: launch.pluginName, result.coordinators)
        ladder(session)
        guard problems.isEmpty else {
            throw ContractExportFailure(
                message:
                    "the route table does not compose (§14): the host would leave the plugin out, so it promises nothing",
                problems: problems, stderr: [])
        }
        return RouteContract(
            plugin: result.plugin, protocolVersion: result.protocolVersion, coordinators: result.coordinators)
    }

    /// What the host's composition finds wrong with the table on its own (its routes into other plugins cannot be
    /// judged here: those are `contract check`'s).
    static func tableProblems(plugin: String, _ coordinators: [CoordinatorDeclaration]) -> [String] {
        let foreign = coordinators.flatMap(\.routes).compactMap {
            RouteRegistry.target(of: $0, declaredBy: plugin)?.plugin
        }
        let report = Composition.check(tables: [(plugin, coordinators)], declaredPlugins: [plugin] + foreign, root: nil)
        return report.issues.filter { $0.severity == .error }.map(\.description)
    }

    /// §3.5–§3.7: `shutdown`, `exit`, then stdin closed, `SIGTERM` to the group 2 s later and `SIGKILL` 2 s after.
    static func ladder(_ session: PluginSession) {
        _ = session.request(ShutdownRequest.method, [:])
        session.notify(ExitNotification.method)
        session.closeStdin()
        guard session.waitForExit(milliseconds: 2_000) == nil else { return }
        session.signalGroup(SIGTERM)
        guard session.waitForExit(milliseconds: 2_000) == nil else { return }
        session.signalGroup(SIGKILL)
        _ = session.waitForExit(milliseconds: 2_000)
    }
}
