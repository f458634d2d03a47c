/// `coordinator/route` (host → plugin): decide what a route of one of the plugin's instances shows.
///
/// The plugin answers with the content (a screen, or a coordinator to open), or rejects the route with
/// `-32013 rejectedByGuard` (a guard), leaving the tree exactly as it was. The host checks the answer against the
/// route's declaration: a route with a `target` must open that coordinator type, a route without one must show a
/// screen.
public enum CoordinatorRouteRequest: HostToPluginRequest {
    public static let method = "coordinator/route"

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID
        public var type: String
        public var route: String
        /// As declared: `push`, `modal`, `fullScreen` for a new entry, `root` for `setRoot`.
        public var transition: Transition
        public var params: JSONValue?
        /// Present when a deep link takes this route.
        public var link: DeepLinkContext?

        public init(
            instance: InstanceID, type: String, route: String, transition: Transition, params: JSONValue? = nil,
            link: DeepLinkContext? = nil
        ) {
            self.instance = instance
            self.type = type
            self.route = route
            self.transition = transition
            self.params = params
            self.link = link
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var content: RouteContent
        /// Replaces the instance's stored state, if given.
        public var state: JSONValue?

        public init(content: RouteContent, state: JSONValue? = nil) {
            self.content = content
            self.state = state
        }
    }
}
