import Glibc
import Logging
import SwitchyardProtocol
import SwitchyardUV

// What an inspector asks of the host (Protocol/README.md §15.2): what each plugin is and declares, and fault
// injection, which only a host started with `allowFaults` takes.
extension Host {
    /// Each plugin of the manifest: its command, its declared coordinator types, its last stderr lines.
    var pluginDescriptions: HostPluginsRequest.Result {
        let plugins = manifest.plugins.map { entry in
            guard let supervisor = supervisor(named: entry.name) else {
                return HostPluginsRequest.Plugin(name: entry.name, command: nil, coordinators: nil, stderr: [])
            }
            let spawn = supervisor.plugin.spawn
            return HostPluginsRequest.Plugin(
                name: entry.name, command: [spawn.executable] + spawn.arguments,
                coordinators: supervisor.routeTable?.coordinators, stderr: supervisor.session?.stderrTail ?? [])
        }
        return HostPluginsRequest.Result(plugins: plugins, faults: options.allowFaults)
    }

    /// The refusal of a fault method on a host that does not take faults, or of a plugin the manifest lacks.
    func faultTarget(_ method: String, _ plugin: String) -> Result<PluginSupervisor, ResponseError> {
        guard options.allowFaults else {
            return .failure(
                ResponseError(
                    .notAllowed, "'\(method)' is off: fault injection needs a host started with --allow-faults",
                    data: ["method": .string(method), "flag": "--allow-faults"]))
        }
        guard let supervisor = supervisor(named: plugin) else {
            return .failure(
                ResponseError(.invalidParams, "the manifest names no plugin '\(plugin)'", data: ["field": "plugin"]))
        }
        return .success(supervisor)
    }

    /// `plugin/signal`: the signal goes to the plugin's process group; a plugin without a process is unavailable.
    func signalPlugin(_ request: PluginSignalRequest.Params) throws(ResponseError) -> PluginSignalRequest.Result {
        let supervisor = try faultTarget(PluginSignalRequest.method, request.plugin).get()
        guard let session = supervisor.session, session.state != .terminated, session.exitStatus == nil else {
            throw .pluginUnavailable(request.plugin, "it has no running process (\(supervisor.state))")
        }
        let number = request.signal.number
        logger.notice("fault injection: \(request.signal.rawValue) to plugin '\(request.plugin)' (pid \(session.pid))")
        session.signal(number)
        return PluginSignalRequest.Result(pid: session.pid)
    }

    /// `plugin/restart`: the shutdown ladder, then a start as `plugin/start` does (instances restored), answered once
    /// it serves. A plugin that is not running is simply started.
    func restartPlugin(_ plugin: String) async throws(ResponseError) -> HostStatusRequest.Plugin {
        let supervisor = try faultTarget(PluginRestartRequest.method, plugin).get()
        guard !shuttingDown else { throw ResponseError(.shuttingDown, "the host is shutting down") }
        let stopsNow: Bool
        switch supervisor.state {
        case .failed, .stopped, .lazy, .hibernated: return try await startPlugin(plugin).get()
        case .stopping: stopsNow = false
        case .starting, .restarting, .ready: stopsNow = true
        }
        // Registered before the stop, which may end at once: once stopped it is started again (see `stateChanged`),
        // and the answer comes when it serves.
        return try await withCheckedContinuation { continuation in
            restartWaiters[plugin, default: []].append(continuation)
            restartRequested.insert(plugin)
            if stopsNow {
                logger.notice("fault injection: restarting plugin '\(plugin)' on request")
                supervisor.stop(graceMs: options.shutdownGraceMs)
            }
        }.get()
    }

    /// Answers the `plugin/restart` requests waiting for `plugin`.
    func answerRestartWaiters(_ plugin: String, _ result: Result<HostStatusRequest.Plugin, ResponseError>) {
        for waiter in restartWaiters.removeValue(forKey: plugin) ?? [] { waiter.resume(returning: result) }
    }
}
