public import SwitchyardProtocol

extension NavigationTree {
    /// What brings `plugin`'s instances back in a restarted process (§16): one `coordinator/create` with reason
    /// `restore` per instance it owns, parents before children, each with its params, where it sits, the state the
    /// plugin last returned for it and the instance as the tree holds it.
    public func restoreRequests(for plugin: String) -> [CoordinatorCreateRequest.Params] {
        // A placeholder was never created in the plugin: it is created (reason `new`), not restored.
        let owned = instances(of: plugin).filter { !$0.isPending }.map { (instance: $0, depth: depth(of: $0.id)) }
            .sorted { ($0.depth, $0.instance.id) < ($1.depth, $1.instance.id) }.map(\.instance)
        // The routes of each parent's entries, indexed once per parent: children of one stack look up its entries.
        var routes: [InstanceID: (plugin: String, routes: [EntryID: String])] = [:]
        return owned.map { instance in
            let parent = instance.parent.flatMap { link -> CoordinatorCreateRequest.Parent? in
                if routes[link.instance] == nil, let owner = self[link.instance] {
                    var byEntry: [EntryID: String] = [:]
                    for entry in owner.allEntries { byEntry[entry.id] = entry.route }
                    routes[link.instance] = (owner.plugin, byEntry)
                }
                guard let owner = routes[link.instance], let route = owner.routes[link.entry] else { return nil }
                return CoordinatorCreateRequest.Parent(instance: link.instance, plugin: owner.plugin, route: route)
            }
            return CoordinatorCreateRequest.Params(
                instance: instance.id, type: instance.type, reason: .restore, params: instance.params, parent: parent,
                state: instance.state, restore: snapshot(of: instance.id))
        }
    }
}
