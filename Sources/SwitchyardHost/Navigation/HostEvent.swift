import SwitchyardNavigation
public import SwitchyardProtocol

/// What a host tells its observers (the CLI, tests, control clients).
public enum HostEvent: Sendable {
    /// The tree has a new revision.
    case treeChanged(TreeChange)
    /// A plugin changed state.
    case pluginChanged(PluginStatus)
    /// A plugin acknowledged `coordinator/destroy` for one of its instances.
    case destroyed(plugin: String, instance: InstanceID, type: String)
    /// A deferred deep link became pending or ended (`deepLink/changed`, Protocol/README.md §13.5).
    case deepLinkChanged(DeepLinkChangedNotification.Params)
}

/// A new revision of the tree. Its ``snapshot`` costs O(instances) and is built only when read, so a change nobody
/// looks at in full (no watcher asked for snapshots) keeps a tree operation O(depth); holding the change is O(1)
/// (the tree is a persistent structure that shares its storage).
public struct TreeChange: Sendable {
    public let revision: UInt64
    let tree: NavigationTree
    /// Plugins not serving at the time of the change, with why.
    let unavailable: [String: String?]
    /// The navigator's ``Navigator/treeEpoch`` for ``tree``.
    let epoch: Int
    /// When the change is one committed chain: the instances it touched (everything it changed is among them).
    let touched: Set<InstanceID>?

    /// The tree as `tree/get` returns it.
    public var snapshot: TreeSnapshot { tree.snapshot(availability: availability) }

    /// Whether each plugin served at the time of the change.
    var availability: NavigationTree.Availability {
        { [unavailable] plugin in
            if let reason = unavailable[plugin] { return (.unavailable, reason) }
            return (.ok, nil)
        }
    }
}
