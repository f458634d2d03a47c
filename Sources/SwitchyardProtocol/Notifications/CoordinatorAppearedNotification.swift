/// `coordinator/appeared` (host → plugin): an entry of one of the plugin's instances became visible again, because
/// what was above it left (a pop, a dismissal) or its tab was selected: Jump's and SwiftUI's `onAppear`, for a
/// coordinator that refreshes what it shows. Sent only for types declared with `appearance: true`.
public enum CoordinatorAppearedNotification: HostToPluginNotification {
    public static let method = "coordinator/appeared"

    public struct Params: Codable, Sendable, Equatable {
        public var instance: InstanceID
        /// The entry now on top of the instance (a stack's top entry or root, the selected tab).
        public var entry: EntryID

        public init(instance: InstanceID, entry: EntryID) {
            self.instance = instance
            self.entry = entry
        }
    }
}
