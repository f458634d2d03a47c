public import SwitchyardProtocol

extension NavigationTree {
    /// What brings `plugin`'s instances back in a restarted process (§16): one `coordinator/create` with reason
    /// `restore` per instance it owns, parents before children, each with its params, where it sits, the state the
    /// plugin last returned for it and the instance as the tree holds it.
    public func restoreRequests(for plugin: String) -> [CoordinatorCreateRequest.Params] {
        // A placeholder was never created in the plugin: it is created (reason `new`), not restored.
        let owned = parentsFirst(instances(of: plugin).filter { !$0.isPending })
        // The routes of each parent's entries, indexed once per parent: children of one stack look up its entries.
        var routes: [InstanceID: (plugin: String, routes: [EntryID: String])] = [:]
        return owned.map { instance in
            let parent = instance.parent.flatMap { link -> CoordinatorCreateRequest.Parent? in
                if routes[link.instance] == nil, let owner = self[link.instance] {
                    var byEntry: [EntryID: String] = [:]
                    byEntry.reserveCapacity(owner.entries.count + owner.tabs.count + 2)
                    for entry in owner.allEntries { byEntry[entry.id] = entry.route }
                    routes[link.instance] = (owner.plugin, byEntry)
                }
                guard let owner = routes[link.instance], let route = owner.routes[link.entry] else { return nil }
                return CoordinatorCreateRequest.Parent(instance: link.instance, plugin: owner.plugin, route: route)
            }
            // From the instance in hand: `snapshot(of:)` would look it up again.
            return CoordinatorCreateRequest.Params(
                instance: instance.id, type: instance.type, reason: .restore, params: instance.params, parent: parent,
                state: instance.state, restore: instance.snapshot { _ in (.ok, nil) })
        }
    }

    /// `instances` ordered by depth, then id: parents before children. Depths are remembered as they are found, so
    /// instances sharing ancestors do not each walk up to the root, and the sort moves indices, not instances.
    func parentsFirst(_ instances: [Instance]) -> [Instance] {
        var depths: [InstanceID: Int] = [:]
        depths.reserveCapacity(instances.count)
        var path: [InstanceID] = []
        func depth(of id: InstanceID) -> Int {
            path.removeAll(keepingCapacity: true)
            var current = id
            // The depth of the instance above the path; -1 above the root (or a parent the tree does not hold).
            var above = -1
            while true {
                if let known = depths[current] {
                    above = known
                    break
                }
                path.append(current)
                // Bounded like ``ancestors(of:)``: a corrupt parent cycle must not hang the host.
                guard path.count <= 10_000, let parent = self[current]?.parent?.instance else { break }
                current = parent
            }
            for (offset, node) in path.reversed().enumerated() { depths[node] = above + 1 + offset }
            return depths[id] ?? 0
        }
        let order = instances.indices.map { (depth: depth(of: instances[$0].id), id: instances[$0].id, index: $0) }
            .sorted { ($0.depth, $0.id) < ($1.depth, $1.id) }
        return order.map { instances[$0.index] }
    }
}
