public import SwitchyardProtocol

extension NavigationTree {
    /// Commits a chain that started from `base` into this tree (the current one), as one new revision.
    ///
    /// Optimistic concurrency: if nothing else committed since `base`, the chain's working tree simply becomes the
    /// tree. Otherwise every instance the chain read or wrote must be unchanged since `base` (same version);
    /// then only those instances are taken from the chain's tree. A chain that read something another chain
    /// changed in the meantime fails with `conflict`, and the caller retries it on the current tree.
    ///
    /// - Returns: whether the tree changed (a chain that changed nothing does not bump the revision).
    @discardableResult
    public mutating func commit(_ result: ChainResult, startedFrom base: NavigationTree) throws(ResponseError) -> Bool {
        guard result.changed else { return false }
        let newRevision = revision + 1
        var merged: NavigationTree
        if revision == base.revision {
            merged = result.tree
        } else {
            for id in result.touched {
                guard let before = base[id] else { continue }  // created by the chain
                guard let now = self[id], now.version == before.version else {
                    throw ResponseError(
                        .conflict, "instance \(id) was changed by another request while this one was running",
                        data: ["instance": .int(id.rawValue)])
                }
            }
            merged = self
            for id in result.touched {
                if let instance = result.tree[id] { merged.put(instance) } else { merged.remove(id) }
            }
            if result.tree.rootID != base.rootID { merged.setRoot(result.tree.rootID) }
        }
        // Stamp what changed with the new revision, its JSON held at its size from now on.
        for id in result.touched {
            guard var instance = merged[id], instance != base[id] else { continue }
            instance.version = newRevision
            instance.compactJSON()
            merged.put(instance)
        }
        merged.revision = newRevision
        merged.nextInstanceID = max(nextInstanceID, result.tree.nextInstanceID)
        merged.nextEntryID = max(nextEntryID, result.tree.nextEntryID)
        self = merged
        return true
    }

    /// Marks ids handed out by `allocator` as used (so a persisted tree never reuses them).
    package mutating func reserveIDs(from allocator: IDAllocator) { absorb(allocator) }
}

extension Instance {
    /// Holds the JSON this instance keeps (its state and params, its entries' params and screen props) at its size
    /// (``JSONValue/compacted()``): what a plugin or a client sent is parsed with room to grow, and the tree keeps it
    /// for the instance's life. Writes back only what was loose, so an entry compacted once is not copied again.
    mutating func compactJSON() {
        if let value = state?.compactedIfLoose() { state = value }
        if let value = params?.compactedIfLoose() { params = value }
        if let entry = root?.compactedJSON() { root = entry }
        if let entry = child?.compactedJSON() { child = entry }
        for index in entries.indices { if let entry = entries[index].compactedJSON() { entries[index] = entry } }
        for index in tabs.indices { if let entry = tabs[index].compactedJSON() { tabs[index] = entry } }
    }
}

extension Entry {
    /// The entry with its params and screen props at their size; nil when they already are.
    func compactedJSON() -> Entry? {
        let params = params?.compactedIfLoose()
        var screen: ScreenDescriptor?
        if case .screen(let shown) = content {
            let props = shown.props?.compactedIfLoose()
            let elements = shown.content?.compactedIfLoose()
            if props != nil || elements != nil {
                screen = ScreenDescriptor(
                    name: shown.name, props: props ?? shown.props, title: shown.title,
                    content: elements ?? shown.content)
            }
        }
        guard params != nil || screen != nil else { return nil }
        var entry = self
        if let params { entry.params = params }
        if let screen { entry.content = .screen(screen) }
        return entry
    }
}
