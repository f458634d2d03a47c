// What a UI that inspects a running app needs and no other method gives (Protocol/README.md §15.2): what each plugin
// is and declares, and fault injection for experiments, refused unless the host was started to take it.

/// `host/plugins` (client → host): each plugin's command, its coordinator types as it declared them in `initialize`
/// (routes, transitions, params with their types, deep-link patterns), and its last stderr lines.
public enum HostPluginsRequest: ControlRequest {
    public static let method = "host/plugins"
    public typealias Params = Empty

    /// One plugin of the manifest.
    public struct Plugin: Codable, Sendable, Equatable {
        public var name: String
        /// The executable and its arguments, as the host starts it (absent if it could not be resolved).
        public var command: [String]?
        /// Its coordinator types as declared in its first successful `initialize` (absent until it has served).
        public var coordinators: [CoordinatorDeclaration]?
        /// Its last stderr lines (at most 20 lines and 4 KiB), oldest first.
        public var stderr: [String]

        public init(name: String, command: [String]?, coordinators: [CoordinatorDeclaration]?, stderr: [String]) {
            self.name = name
            self.command = command
            self.coordinators = coordinators
            self.stderr = stderr
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var plugins: [Plugin]
        /// Whether this host takes `plugin/signal` and `plugin/restart` (`switchyard run --allow-faults`).
        public var faults: Bool

        public init(plugins: [Plugin], faults: Bool) {
            self.plugins = plugins
            self.faults = faults
        }
    }
}

/// `plugin/signal` (client → host): sends a signal to a plugin's process group, for fault experiments. Only on a host
/// started with fault injection on; otherwise `-32011 notAllowed`.
public enum PluginSignalRequest: ControlRequest {
    public static let method = "plugin/signal"

    /// The signals a fault experiment sends: a crash, a hang, and the end of the hang.
    public enum Signal: String, Codable, Sendable, CaseIterable {
        case kill = "SIGKILL"
        case stop = "SIGSTOP"
        case cont = "SIGCONT"
        /// What the plugin makes of it is its own: the misbehaving test plugin floods its stdout (a fault experiment's
        /// `flood` against a host it runs as a child).
        case usr1 = "SIGUSR1"
    }

    public struct Params: Codable, Sendable, Equatable {
        public var plugin: String
        public var signal: Signal
        public init(plugin: String, signal: Signal) {
            self.plugin = plugin
            self.signal = signal
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// The process (group) that was signalled.
        public var pid: Int32
        public init(pid: Int32) { self.pid = pid }
    }
}

/// `plugin/restart` (client → host): stops a plugin with the shutdown ladder and starts it again (its instances
/// restored, as after a crash); answered with its status once it serves. Only on a host started with fault injection
/// on; otherwise `-32011 notAllowed`.
public enum PluginRestartRequest: ControlRequest {
    public static let method = "plugin/restart"
    public typealias Params = PluginStartRequest.Params
    public typealias Result = HostStatusRequest.Plugin
}
