import SwitchyardSystem
import Synchronization

/// Where the CLI's log lines go: stderr, unless an interactive prompt is up. Then each line is printed above the line
/// being typed, which is drawn again as it was (a plugin's `NOTICE [todos] opening todo 42` used to land on the prompt
/// line, in the middle of what the user typed).
enum LogOutput {
    private static let redirect = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Writes one formatted log line (its newline included).
    static func write(_ line: String) {
        if let destination = redirect.withLock({ $0 }) {
            destination(line)
        } else {
            StandardError.write(line)
        }
    }

    /// Sends log lines to `destination` until `body` returns.
    static func redirecting<T>(to destination: @escaping @Sendable (String) -> Void, _ body: () async -> T) async -> T {
        redirect.withLock { $0 = destination }
        defer { redirect.withLock { $0 = nil } }
        return await body()
    }
}
