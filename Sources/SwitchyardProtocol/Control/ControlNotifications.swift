/// `tree/changed` (host → subscribed client): the tree has a new revision.
public enum TreeChangedNotification: ControlNotification {
    public static let method = "tree/changed"

    public struct Params: Codable, Sendable, Equatable {
        public var revision: UInt64
        /// Absent when the client subscribed with `snapshots: false`, and for a watcher with `deltas` that holds
        /// ``base``.
        public var snapshot: TreeSnapshot?
        /// With `deltas`: the revision of the snapshot ``patch`` applies to (the one the watcher holds).
        public var base: UInt64?
        /// With `deltas`: a JSON Patch (RFC 6902) from the snapshot of ``base`` to this one. See
        /// ``TreeSnapshot/applying(_:)``.
        public var patch: [JSONPatchOperation]?

        public init(revision: UInt64, snapshot: TreeSnapshot?, base: UInt64? = nil, patch: [JSONPatchOperation]? = nil)
        {
            self.revision = revision
            self.snapshot = snapshot
            self.base = base
            self.patch = patch
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
