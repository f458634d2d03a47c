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
    }

    public struct Params: Codable, Sendable, Equatable {
        public var query: Query
        public var instance: InstanceID?
        public var route: String?
        public var params: JSONValue?

        public init(query: Query, instance: InstanceID? = nil, route: String? = nil, params: JSONValue? = nil) {
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
