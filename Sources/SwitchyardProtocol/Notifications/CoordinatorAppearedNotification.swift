/// `coordinator/appeared` (host → plugin): an entry of one of the plugin's instances became visible again, because
/// what was above it left (a pop, a dismissal) or its tab was selected: Jump's and SwiftUI's `onAppear`, for a
/// coordinator that refreshes what it shows. Sent only for types declared with `appearance: true`.
public enum CoordinatorAppearedNotification: HostToPluginNotification {
    public static let method = "coordinator/appeared"

    /// The instance, and the entry now on top of it (a stack's top entry or root, the selected tab).
    public typealias Params = EntryReference
}
