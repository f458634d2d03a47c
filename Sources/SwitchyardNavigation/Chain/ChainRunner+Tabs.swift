import SwitchyardProtocol

// Dynamic tabs and badges (Protocol/README.md §12.7, SUICoordinator's `setPages` and `setBadge`): the owner of a
// tabs coordinator adds, removes and reorders its tabs at run time, and sets a badge per tab.
extension ChainRunner {
    /// `setTabs`: the tabs become `names`, in that order. A tab the instance lacks is asked of the owner
    /// (`coordinator/route`, transition `tab`) one at a time; the step runs again after each answer, and once every
    /// named tab is there, the others leave the tree (reported last first, their coordinators destroyed deepest
    /// first, §12.1) and the order is set. The selected tab stays selected; if it left, its nearest neighbour that
    /// stays is selected (the next one, else the previous one) and the owner gets `coordinator/tabSelected`.
    func setTabs(_ current: Instance, _ names: [String]?, index: Int) throws(ResponseError) -> ChainNeed? {
        guard let names, !names.isEmpty else {
            throw ResponseError(
                .invalidParams, "step \(index) (setTabs) needs 'tabs', the tab route names in order (at least one)",
                data: ["field": .string("steps[\(index)].tabs")])
        }
        guard Set(names).count == names.count else {
            throw ResponseError(
                .invalidParams, "step \(index) (setTabs) names a tab twice: \(names)",
                data: ["field": .string("steps[\(index)].tabs")])
        }
        for name in names {
            let declaration = try routeDeclaration(current, name)
            guard declaration.transition == .tab else {
                throw .notAllowed(
                    current, "route '\(name)' is a \(declaration.transition.rawValue) route, not a tab", route: name)
            }
        }
        if let missing = names.first(where: { name in !current.tabs.contains { $0.route == name } }) {
            return ask(current, try routeDeclaration(current, missing), params: nil, index: index, purpose: .addTab)
        }
        let staying = current.tabs.filter { names.contains($0.route) }
        let leaving = current.tabs.filter { !names.contains($0.route) }
        let ordered = names.compactMap { name in staying.first { $0.route == name } }
        let selected = current.selectedTabEntry.map(\.route)
        var updated = current
        if !leaving.isEmpty {
            discard(leaving.reversed(), of: current)
            updated = try instance(current.id)
        }
        updated.tabs = ordered
        // Only a set that differs from the declared one needs keeping as such (a state file's merge, §17).
        updated.dynamicTabs = names != (try declaration(current)).routes.filter { $0.transition == .tab }.map(\.name)
        if let selected, let position = ordered.firstIndex(where: { $0.route == selected }) {
            updated.selectedTab = position
        } else {
            let neighbour = Self.neighbour(of: current.selectedTab, in: current.tabs) { names.contains($0.route) }
            updated.selectedTab = ordered.firstIndex { $0.route == neighbour?.route } ?? 0
            if let chosen = updated.selectedTabEntry {
                effects.append(
                    .tabSelected(instance: current.id, plugin: current.plugin, tab: chosen.route, isRepeat: false))
            }
        }
        if updated != current { put(updated) }
        noteAppearance(updated)
        land(current.id)
        return nil
    }

    /// The nearest entry to `position` that `stays`: the next ones first, then the previous ones.
    static func neighbour(of position: Int, in tabs: [Entry], stays: (Entry) -> Bool) -> Entry? {
        let after = tabs.indices.filter { $0 > position }
        let before = tabs.indices.filter { $0 < position }.reversed()
        return (after + before).lazy.map { tabs[$0] }.first(where: stays)
    }

    /// `setBadge`: the tab's badge (nil or absent clears it); a badge equal to the current one changes nothing.
    func setBadge(_ current: Instance, _ tab: String, _ badge: String?) throws(ResponseError) {
        guard let position = current.tabs.firstIndex(where: { $0.route == tab }) else {
            throw .routeNotFound(
                current, tab, "no such tab (tabs: \(current.tabs.map(\.route).joined(separator: ", ")))")
        }
        if current.tabs[position].badge != badge {
            var updated = current
            updated.tabs[position].badge = badge
            put(updated)
        }
        land(current.id)
    }
}
