/// `coordinator/destroy` (host → plugin): the instance left the tree (dismissed, popped, its flow finished, or a
/// failed chain created it). Sent for every removed instance, deepest first. Answer `{}` once it is released.
public enum CoordinatorDestroyRequest: HostToPluginRequest {
    public static let method = "coordinator/destroy"

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID
        public var type: String

        public init(instance: InstanceID, type: String) {
            self.instance = instance
            self.type = type
        }
    }

    public typealias Result = Empty
}
