/// `tree/query` (plugin → host, and control client → host): read-only questions about the tree
/// (Stinsen's `isRoot`/`hasRoot`/`currentRoute`/`isInStack`, SUICoordinator's `topCoordinator`).
public enum TreeQueryRequest: PluginToHostRequest, ControlRequest {
    public static let method = "tree/query"

    public enum Query: String, Codable, Sendable {
        /// Is `route` (with `params`, when given) the root of the stack `instance`? → boolean
        case isRoot
        /// The root coordinator of `instance` if its root is `route`, else null. → instance id or null
        case hasRoot
        /// The top-most route of `instance` (its last entry, or its root). → string or null
        case currentRoute
        /// Is `route` (with `params`) among the entries of `instance`? → boolean
        case isInStack
        /// The top-most visible coordinator starting from `instance` (default: the root). → instance id
        case topCoordinator
        /// Would `dismissCoordinator` of `instance` succeed (Stinsen's `canDismiss`)? → boolean
        case canDismiss
        /// Does `instance` have a parent (it is not the tree's root)? → boolean
        case hasParent
        /// How many presented (`modal`, `fullScreen`) entries `instance`'s stack holds (Jump's presented contexts). →
        /// integer
        case presentedCount
        /// The most recently created instance of `plugin`.`type` (Stinsen's `RouterStore` returns the newest), beside
        /// `PLUGIN.TYPE` targets that take the first depth-first. `plugin` defaults to the asking plugin. → id or null
        case newest
    }

    public struct Params: Codable, Sendable, Equatable {
        public var query: Query
        public var instance: InstanceID?
        public var route: String?
        public var params: JSONValue?
        /// `newest`: the type's plugin (default: the plugin asking).
        public var plugin: String?
        /// `newest`: the coordinator type.
        public var type: String?

        public init(
            query: Query, instance: InstanceID? = nil, route: String? = nil, params: JSONValue? = nil,
            plugin: String? = nil,
            type: String? = nil
        ) {
            self.plugin = plugin
            self.type = type
            self.query = query
            self.instance = instance
            self.route = route
            self.params = params
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var result: JSONValue
        public init(result: JSONValue) { self.result = result }
    }
}
