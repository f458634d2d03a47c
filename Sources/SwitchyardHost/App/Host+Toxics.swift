import Logging
import SwitchyardProtocol

// Faults on a plugin's pipes (Protocol/README.md §15.2, §22), which only a host started with
// `allowFaults` takes: a relay on every plugin's stdio, idle until a fault experiment sets toxics on it.
extension Host {
    /// Gives a supervisor the relay's switch: idle until a fault experiment sets toxics.
    func equipForFaults(_ supervisor: PluginSupervisor) {
        supervisor.pipeFaults = PipeFaults()
    }

    /// `plugin/toxics`: replaces the faults on the plugin's pipes; they apply at once and to every later start.
    func setToxics(_ request: PluginToxicsRequest.Params) throws(ResponseError) -> PluginToxicsRequest.Result {
        let supervisor = try faultTarget(PluginToxicsRequest.method, request.plugin).get()
        for (index, toxic) in request.toxics.enumerated() {
            if let problem = toxic.problem {
                throw ResponseError(
                    .invalidParams, "toxics[\(index)] (\(toxic.kind.rawValue)): \(problem.field) \(problem.reason)",
                    data: ["field": .string("toxics[\(index)].\(problem.field)")])
            }
        }
        if let delay = request.startDelayMs, delay < 0 {
            throw ResponseError(.invalidParams, "startDelayMs must not be negative", data: ["field": "startDelayMs"])
        }
        guard let faults = supervisor.pipeFaults else {
            throw ResponseError(.internalError, "plugin '\(request.plugin)' has no relay")
        }
        faults.set(request)
        let kinds = request.toxics.map { "\($0.kind.rawValue) \($0.direction.rawValue)" }
        logger.notice(
            "fault injection: plugin '\(request.plugin)' pipes: \(kinds.isEmpty ? "healed" : kinds.joined(separator: ", "))\(request.startDelayMs.map { ", start delayed \($0) ms" } ?? "")\(request.crashOnRestore == true ? ", crash on restore" : "")"
        )
        return PluginToxicsRequest.Result(toxics: request.toxics.count)
    }
}
