/// `coordinator/tabSelected` (host → plugin): a tab of one of the plugin's tabs instances was selected.
/// `isRepeat` is true when it was already selected (Stinsen's `onTapped(isRepeat)`, e.g. to pop to root on re-tap).
public enum CoordinatorTabSelectedNotification: HostToPluginNotification {
    public static let method = "coordinator/tabSelected"

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID
        public var tab: String
        public var isRepeat: Bool

        public init(instance: InstanceID, tab: String, isRepeat: Bool) {
            self.instance = instance
            self.tab = tab
            self.isRepeat = isRepeat
        }
    }
}
