import SwitchyardProtocol

// Host-side failures are wire errors from the start: a code a program can switch on, a sentence naming the plugin,
// and the context in `data` (Hummingbird's `HTTPResponseError` idea: the error knows how to render itself).
extension ResponseError {
    static func timeout(_ plugin: String, method: String, milliseconds: Int) -> ResponseError {
        ResponseError(
            .timeout, "plugin '\(plugin)' did not answer '\(method)' within \(milliseconds) ms",
            data: ["plugin": .string(plugin), "method": .string(method), "timeoutMs": .int(Int64(milliseconds))])
    }

    static func handshake(
        _ plugin: String, _ code: ErrorCode, _ reason: String, data: JSONObject = [:]
    ) -> ResponseError {
        var context = data
        context["plugin"] = .string(plugin)
        return ResponseError(code, "plugin '\(plugin)' failed the handshake: \(reason)", data: .object(context))
    }

    /// Adds the plugin's name to a protocol violation's context.
    func naming(plugin: String) -> ResponseError {
        var copy = adding("plugin", .string(plugin))
        copy.message = "plugin '\(plugin)': \(message)"
        return copy
    }
}
