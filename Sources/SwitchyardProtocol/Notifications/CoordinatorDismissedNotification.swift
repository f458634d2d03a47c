/// `coordinator/dismissed` (host → plugin): an entry of one of the plugin's instances left the tree: popped,
/// dismissed, or removed by the user (a swipe back or a sheet dragged away, reported by a control client).
/// The Stinsen `onDismiss` and Coordinator `modalRoutes(onDismiss:)` hooks, across processes.
public enum CoordinatorDismissedNotification: HostToPluginNotification {
    public static let method = "coordinator/dismissed"

    public enum Reason: String, Codable, Sendable {
        /// The user did it (reported through `user/dismissed`).
        case user
        /// A navigation request did it.
        case navigation
    }

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID
        public var entry: EntryID
        public var route: String
        public var reason: Reason

        public init(instance: InstanceID, entry: EntryID, route: String, reason: Reason) {
            self.instance = instance
            self.entry = entry
            self.route = route
            self.reason = reason
        }
    }
}
