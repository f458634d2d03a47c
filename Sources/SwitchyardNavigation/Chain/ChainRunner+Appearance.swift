import SwitchyardProtocol

// Appearance (Protocol/README.md §12.9): the owner of an entry that becomes visible again is told, once per chain,
// after the chain's other effects. Only types declared with `appearance: true` are looked at.
extension ChainRunner {
    /// A step may have changed what `instance` shows on top (entries removed, a tab selected).
    func noteAppearance(_ instance: Instance) {
        guard registry.asksAppearance, registry.declaration(of: instance)?.appearance == true else { return }
        appearing.insert(instance.id)
    }

    /// For every noted instance still in the tree: its visible entry, if that changed and was already there when the
    /// chain started (an entry the chain itself pushed is not "again").
    func appearances() -> [ChainEffect] {
        appearing.sorted().compactMap { id in
            guard let now = tree[id], let before = baseTree[id], let visible = now.visibleEntry,
                visible.id != before.visibleEntry?.id, before.entry(visible.id) != nil
            else { return nil }
            return .appeared(instance: id, plugin: now.plugin, entry: visible.id)
        }
    }
}

extension Instance {
    /// What the instance shows on top: a stack's top entry (else its root), the selected tab, a wrapper's child.
    var visibleEntry: Entry? {
        switch kind {
        case .stack: entries.last ?? root
        case .tabs: selectedTabEntry
        case .wrapper: child
        case nil: nil
        }
    }
}
