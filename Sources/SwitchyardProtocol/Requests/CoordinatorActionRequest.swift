/// `coordinator/action` (host → plugin): the user did something on a screen of one of the plugin's instances (a
/// button, Jump's `onNext`), and the coordinator decides where to go.
///
/// The host sends it for a `user/action` a client delivered, once the action is checked against the route's
/// declared `actions` (name and params). The plugin answers with the steps to take from that instance, applied
/// atomically as one chain and one revision like any `navigate`, or with no steps: nothing changes.
public enum CoordinatorActionRequest: HostToPluginRequest {
    public static let method = "coordinator/action"

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID
        /// The entry whose screen emitted the action.
        public var entry: EntryID
        /// That entry's route.
        public var route: String
        public var action: String
        public var params: JSONValue?

        public init(instance: InstanceID, entry: EntryID, route: String, action: String, params: JSONValue? = nil) {
            self.instance = instance
            self.entry = entry
            self.route = route
            self.action = action
            self.params = params
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// The navigation the coordinator decided on, from the action's instance; absent or empty: none.
        public var steps: [NavigationStep]?

        public init(steps: [NavigationStep]? = nil) { self.steps = steps }
    }
}
