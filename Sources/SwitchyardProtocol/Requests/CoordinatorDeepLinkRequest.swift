/// `coordinator/deepLink` (host → plugin): for a type declared with `customDeepLinks`, the plugin decides which of
/// its routes the remaining segments take (Coordinator's `handleDeepLink` with its `remainingRoutes` cursor).
///
/// With `dryRun` the plugin only checks (its static `canHandleDeepLink`), and `instance` may be absent because the
/// instance does not exist yet. The answer names one declared route, its params and how many segments it consumed;
/// the host continues with the rest. `-32014 deepLinkInvalid` rejects the link.
public enum CoordinatorDeepLinkRequest: HostToPluginRequest {
    public static let method = "coordinator/deepLink"

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID?
        public var type: String
        /// The segments not consumed yet.
        public var segments: [String]
        public var query: [String: String]
        public var dryRun: Bool

        public init(instance: InstanceID?, type: String, segments: [String], query: [String: String], dryRun: Bool) {
            self.instance = instance
            self.type = type
            self.segments = segments
            self.query = query
            self.dryRun = dryRun
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var route: String
        public var params: JSONValue?
        /// How many segments the route consumed (0 is allowed: pass through).
        public var consumed: Int

        public init(route: String, params: JSONValue? = nil, consumed: Int) {
            self.route = route
            self.params = params
            self.consumed = consumed
        }
    }
}
