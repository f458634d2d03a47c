/// `initialize`: the first message on every plugin connection (host → plugin).
///
/// The host offers every protocol version it speaks; the plugin answers with the one it chose, its name and
/// version, and its route table. A plugin that speaks none of the offered versions answers with
/// ``ErrorCode/unsupportedProtocolVersion`` (listing its own in `data.supported`) and the host refuses it.
public enum InitializeRequest: HostToPluginRequest {
    public static let method = "initialize"

    public struct Params: Codable, Sendable, Equatable {
        /// Versions the host speaks, newest first.
        public var protocolVersions: [Int]
        public var host: PluginInfo
        /// The name the manifest gives this plugin (what other plugins' routes use to target it).
        public var pluginName: String
        public var limits: PluginLimits
        /// How many times the host has restarted this plugin (absent on the first start). A plugin MAY use it to
        /// skip one-time set-up; the instances it owned arrive as `coordinator/create` with reason `restore`.
        public var restarts: Int?

        public init(
            protocolVersions: [Int], host: PluginInfo, pluginName: String, limits: PluginLimits, restarts: Int? = nil
        ) {
            self.protocolVersions = protocolVersions
            self.host = host
            self.pluginName = pluginName
            self.limits = limits
            self.restarts = restarts
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// One of the offered versions.
        public var protocolVersion: Int
        public var plugin: PluginInfo
        /// The coordinator types this plugin implements: its route table.
        public var coordinators: [CoordinatorDeclaration]

        public init(protocolVersion: Int, plugin: PluginInfo, coordinators: [CoordinatorDeclaration]) {
            self.protocolVersion = protocolVersion
            self.plugin = plugin
            self.coordinators = coordinators
        }
    }
}
