/// `tree/changed` (host → subscribed client): the tree has a new revision.
public enum TreeChangedNotification: ControlNotification {
    public static let method = "tree/changed"

    public struct Params: Codable, Sendable, Equatable {
        public var revision: UInt64
        /// Absent when the client subscribed with `snapshots: false`.
        public var snapshot: TreeSnapshot?

        public init(revision: UInt64, snapshot: TreeSnapshot?) {
            self.revision = revision
            self.snapshot = snapshot
        }
    }
}

/// `plugin/changed` (host → subscribed client): a plugin changed state (ready, restarting, failed...).
public enum PluginChangedNotification: ControlNotification {
    public static let method = "plugin/changed"
    public typealias Params = HostStatusRequest.Plugin
}

/// `coordinator/destroyed` (host → subscribed client): a plugin acknowledged `coordinator/destroy` for an instance.
public enum CoordinatorDestroyedNotification: ControlNotification {
    public static let method = "coordinator/destroyed"

    public struct Params: Codable, Sendable, Equatable {
        public var plugin: String
        public var instance: InstanceID
        public var type: String

        public init(plugin: String, instance: InstanceID, type: String) {
            self.plugin = plugin
            self.instance = instance
            self.type = type
        }
    }
}
