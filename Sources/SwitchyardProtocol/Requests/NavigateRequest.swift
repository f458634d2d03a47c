/// `navigate` (plugin → host, and control client → host): apply a chain of steps, atomically.
///
/// The steps run one after the other, each on the instance the previous one landed on, starting at `instance`
/// (control clients: default the tree's root). The chain applies fully, as one revision, or not at all.
///
/// A plugin may run any step on instances it owns. On an instance of another plugin it may only take a `route` or
/// `setRoot` (which that instance's plugin decides) or `selectTab`, and only on an ancestor of an instance it
/// owns; anything else is `-32012 notOwner`.
public enum NavigateRequest: PluginToHostRequest, ControlRequest {
    public static let method = "navigate"

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID?
        public var steps: [NavigationStep]

        public init(instance: InstanceID? = nil, steps: [NavigationStep]) {
            self.instance = instance
            self.steps = steps
        }
    }

    public struct Result: Codable, Sendable, Equatable {
        /// The tree's revision after the chain (unchanged if it changed nothing).
        public var revision: UInt64
        /// The instance the last step landed on.
        public var instance: InstanceID

        public init(revision: UInt64, instance: InstanceID) {
            self.revision = revision
            self.instance = instance
        }
    }
}
