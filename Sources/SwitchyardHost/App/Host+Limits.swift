import SwitchyardProtocol

// Resource limits on a plugin's running process (Protocol/README.md §22.5), which only a host started with
// `allowFaults` takes: memory, CPU and descriptors, each with its healing step.
extension Host {
    /// `plugin/limits`: replaces the limits on the plugin's running process (none: healed) and says which mechanism
    /// put each. Checked whole before anything changes.
    func setLimits(_ request: PluginLimitsRequest.Params) throws(ResponseError) -> PluginLimitsRequest.Result {
        let supervisor = try faultTarget(PluginLimitsRequest.method, request.plugin).get()
        let heartbeat = supervisor.plugin.limits
        if let problem = request.problem(
            heartbeatTimeoutMs: heartbeat.heartbeatIntervalMs > 0 ? heartbeat.heartbeatTimeoutMs : 0)
        {
            throw ResponseError(
                .invalidParams, "limits for plugin '\(request.plugin)': \(problem.field) \(problem.reason)",
                data: ["field": .string(problem.field)])
        }
        guard let session = supervisor.session, session.state == .ready, session.exitStatus == nil, session.pid > 0
        else {
            throw .pluginUnavailable(request.plugin, "it has no running process to limit (\(supervisor.state))")
        }
        let faults = supervisor.resourceFaults ?? ResourceFaults(loop: loop, logger: logger)
        supervisor.resourceFaults = faults
        return try faults.apply(request, to: session, guardian: guardian)
    }
}
