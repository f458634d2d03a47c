/// `coordinator/create` (host → plugin): a new instance of one of the plugin's coordinator types, or the restore of
/// one it owned before a restart.
///
/// For a new instance (`reason` `new` or `restart`) the plugin answers with the initial content: the root of a
/// stack, the content of every tab, or a wrapper's child. For `restore` the host already holds the instance's
/// tree (`restore`); the plugin rebuilds its own bookkeeping from it (and `state`) and answers `{}`. For `upgrade`
/// (a new version taking over a running one, spec §20) it also gets the version the state was written by
/// (`fromVersion`), migrates the state and answers `{state}` (absent: the state as it was).
public enum CoordinatorCreateRequest: HostToPluginRequest {
    public static let method = "coordinator/create"

    public enum Reason: String, Codable, Sendable {
        /// A route opened it (or it is the tree's root).
        case new
        /// `restart` was called on it: fresh content, same id.
        case restart
        /// The plugin restarted (or the host restored a state file): rebuild from `restore`, change nothing.
        case restore
        /// A new version of the plugin takes over the instance from the running one (spec §20): rebuild from
        /// `restore` as for a restore, migrate `state` from `fromVersion`, and answer the migrated state.
        case upgrade
    }

    public struct Parent: Codable, Sendable, Equatable {
        public var instance: InstanceID
        public var plugin: String
        public var route: String

        public init(instance: InstanceID, plugin: String, route: String) {
            self.instance = instance
            self.plugin = plugin
            self.route = route
        }
    }

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID
        public var type: String
        public var reason: Reason
        public var params: JSONValue?
        public var parent: Parent?
        /// The state the plugin attached to this instance earlier (any JSON), handed back on restore and restart.
        public var state: JSONValue?
        /// `restore` and `upgrade`: the instance as the host holds it.
        public var restore: InstanceSnapshot?
        /// `upgrade` only: the version of the plugin that wrote `state` (what its `initialize` reported).
        public var fromVersion: String?

        public init(
            instance: InstanceID, type: String, reason: Reason, params: JSONValue? = nil, parent: Parent? = nil,
            state: JSONValue? = nil, restore: InstanceSnapshot? = nil, fromVersion: String? = nil
        ) {
            self.instance = instance
            self.type = type
            self.reason = reason
            self.params = params
            self.parent = parent
            self.state = state
            self.restore = restore
            self.fromVersion = fromVersion
        }
    }

    /// The initial content of a stack's root.
    public struct Root: Codable, Sendable, Equatable {
        public var route: String
        public var params: JSONValue?
        public var content: RouteContent

        public init(route: String, params: JSONValue? = nil, content: RouteContent) {
            self.route = route
            self.params = params
            self.content = content
        }
    }

    /// The content of one tab.
    public struct Tab: Codable, Sendable, Equatable {
        public var route: String
        public var content: RouteContent

        public init(route: String, content: RouteContent) {
            self.route = route
            self.content = content
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// `stack`: the root (its route must be declared with transition `root`).
        public var root: Root?
        /// `tabs`: every declared tab, in declaration order.
        public var tabs: [Tab]?
        /// `tabs`: the selected tab (default: `initialRoute`, else the first).
        public var selectedTab: String?
        /// `wrapper`: the child.
        public var child: RouteContent?
        /// Any JSON the plugin wants back on restore (kept by the host, written to the state file). For `upgrade`:
        /// the migrated state (absent: the state as it was).
        public var state: JSONValue?

        public init(
            root: Root? = nil, tabs: [Tab]? = nil, selectedTab: String? = nil, child: RouteContent? = nil,
            state: JSONValue? = nil
        ) {
            self.root = root
            self.tabs = tabs
            self.selectedTab = selectedTab
            self.child = child
            self.state = state
        }
    }
}
