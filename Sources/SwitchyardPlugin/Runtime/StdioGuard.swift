import SwitchyardSystem

/// Keeps stdout for the protocol alone.
enum StdioGuard {
    /// Redirects C stdio's `stdout` (what `print`, `printf` and `puts` write to) to stderr, so stray output from
    /// plugin code lands in the host log instead of in the JSON-lines stream: the most common way a stdio plugin
    /// breaks, per the MCP and go-plugin trackers. Protocol messages are written to fd 1 directly.
    ///
    /// Raw `write(1, …)` calls from native code bypass stdio and would still reach the stream; the host then
    /// reports a protocol violation for that line and goes on.
    ///
    /// - Returns: the descriptor to write protocol messages to.
    static func protectStdout() -> Int32 {
        StandardError.redirectStandardOutput()
        return 1
    }

    static func writeError(_ text: String) {
        StandardError.write(text)
    }
}
