/// `log` (plugin → host): a structured log line, forwarded to the host log with the plugin's name.
/// (Plain stderr lines are forwarded too; this carries a level.)
public enum LogNotification: PluginToHostNotification {
    public static let method = "log"

    public enum Level: String, Codable, Sendable {
        case trace, debug, info, notice, warning, error, critical
    }

    public struct Params: Codable, Sendable, Equatable {
        public var level: Level
        public var message: String

        public init(level: Level, message: String) {
            self.level = level
            self.message = message
        }
    }
}
