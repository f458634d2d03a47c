public import SwitchyardProtocol

// What the host needs of the tree to replace a plugin's process while the app runs (spec §20): where the user is,
// what an upgrade sends the new version, the state it keeps for a plugin, and the switch itself.
extension NavigationTree {
    /// The instances on the **selected path**: the root, then at each instance what it shows on top — a stack's top
    /// entry (its last entry, else its root), a tabs coordinator's selected tab, a wrapper's child — as long as that
    /// is a coordinator. What the user sees; a plugin with an instance here is never idle (§20.3).
    public var selectedPath: [InstanceID] {
        var path: [InstanceID] = []
        var current = rootID
        while let id = current, let instance = self[id], path.count < 10_000 {
            path.append(id)
            let shown: Entry? =
                switch instance.kind {
                case .stack?: instance.entries.last ?? instance.root
                case .tabs?: instance.selectedTabEntry
                case .wrapper?: instance.child
                case nil: nil
                }
            current = shown?.content.coordinator
        }
        return path
    }

    /// What moves `plugin`'s instances into a new version of it (§20.1): one `coordinator/create` with reason
    /// `upgrade` per instance it owns, parents first, as a restore carries them, with the version that wrote the
    /// state.
    public func upgradeRequests(for plugin: String, fromVersion: String?) -> [CoordinatorCreateRequest.Params] {
        restoreRequests(for: plugin).map { request in
            var upgrade = request
            upgrade.reason = .upgrade
            upgrade.fromVersion = fromVersion
            return upgrade
        }
    }

    /// The bytes of state the tree keeps for `plugin`'s instances (their `state` as compact JSON): what a
    /// hibernated plugin leaves with the host (§20.3). O(n), like ``instances(of:)``.
    public func stateBytes(of plugin: String) -> Int {
        instances(of: plugin).reduce(0) { total, instance in
            total + (instance.state.map { JSONWriter.encode($0).count } ?? 0)
        }
    }

    /// The switch of an upgrade (§20.1): the instances take the states their new process answered, in one new
    /// revision (always: the plugin serving them changed), ids, entries and selection untouched. Instances the tree
    /// no longer holds are skipped. Returns the instances whose state changed (the ones stamped with the revision).
    @discardableResult
    package mutating func commitStates(_ states: [InstanceID: JSONValue?]) -> Set<InstanceID> {
        let newRevision = revision + 1
        var changed = Set<InstanceID>()
        for (id, state) in states {
            guard var instance = self[id], instance.state != state else { continue }
            instance.state = state
            instance.version = newRevision
            instance.compactJSON()
            put(instance)
            changed.insert(id)
        }
        revision = newRevision
        return changed
    }
}
