import SwitchyardProtocol

// Steps that keep one library's meaning under its own name (Protocol/README.md §12.5): the Coordinator library's
// pop on the shared navigation path, SUICoordinator's pushes-only pop and popToRoot, and its forcePresentation.
extension ChainRunner {
    /// `popPath` (Coordinator's `pop`): pushed flows share one navigation path, so the top of the path is the top
    /// entry of the deepest flow pushed from here. It is removed; a pushed flow that shows only its root leaves with
    /// the entry holding it (popping a pushed child's only screen pops the child). A sheet on top is not on the
    /// path: refused, as that library's `pop` leaves sheets alone.
    func popPath(_ current: Instance) throws(ResponseError) {
        var node = current
        var depth = 0
        while let top = node.entries.last, top.transition == .push, let child = top.content.coordinator,
            let inner = tree[child], inner.kind == .stack, depth < 10_000
        {
            node = try instance(inner.id)
            depth += 1
        }
        if let top = node.entries.last {
            guard top.transition == .push else {
                throw .notAllowed(
                    node,
                    "a \(top.transition.rawValue) entry ('\(top.route)') is on top, and popPath pops only the navigation path (dismiss it with dismiss or close)",
                    entry: top.id)
            }
            try authorize(node, "popPath")
            try removeEntries(of: node.id, from: node.entries.count - 1)
        } else if node.id != current.id, let link = node.parent, let parent = tree[link.instance],
            let position = parent.entries.firstIndex(where: { $0.id == link.entry })
        {
            try authorize(parent, "popPath")
            try removeEntries(of: parent.id, from: position)
        } else {
            throw .notAllowed(current, "nothing to pop: the navigation path is at its root")
        }
        land(current.id)
    }

    /// `popPushed` / `popPushedToRoot` (SUICoordinator's `pop` and `popToRoot`): the coordinator's own navigation
    /// path is the pushes below its first modal; the last of them (or all of them) leave, and the modals open above
    /// stay where they are, with what they show.
    func popPushed(_ current: Instance, all: Bool) throws(ResponseError) {
        let firstModal = current.entries.firstIndex { $0.transition.isModal } ?? current.entries.count
        guard firstModal > 0 else {
            if all { return land(current.id) }
            throw .notAllowed(
                current,
                "no pushed entry to pop (the navigation path is at its root; modals are dismissed with dismiss)")
        }
        let doomed = all ? 0..<firstModal : (firstModal - 1)..<firstModal
        var owner = current
        discard(owner.entries[doomed].reversed(), of: owner)
        owner.entries.removeSubrange(doomed)
        put(owner)
        noteAppearance(owner)
        land(current.id)
    }

    /// `forcePresent` + `route` (SUICoordinator's `forcePresentation`): presents the route over everything this
    /// coordinator shows, whatever is on top of its stack: as a modal (or `fullScreen` when the route is declared so,
    /// or the step's `transition` when the route allows it), never as a push. From anywhere: every tabs coordinator
    /// above selects the tab that leads here, so the presentation is on screen. What an ancestor stack shows above
    /// this coordinator's flow stays there: the entry is this coordinator's, as its route is.
    func forcePresent(
        _ current: Instance, _ step: NavigationStep, route: String, index: Int
    ) throws(ResponseError) -> ChainNeed {
        let declaration = try routeDeclaration(current, route)
        guard declaration.transition.isStackEntry else {
            throw .notAllowed(
                current, "route '\(route)' is a \(declaration.transition.rawValue) route, not one to present",
                route: route)
        }
        let presented: Transition? =
            step.transition
            ?? (declaration.transition.isModal
                ? declaration.transition : [.modal, .fullScreen].first(where: declaration.allows))
        guard let presented, presented.isModal, declaration.allows(presented) else {
            throw .notAllowed(
                current,
                "route '\(route)' cannot be presented modally (it allows: \(([declaration.transition] + (declaration.transitions ?? [])).map(\.rawValue)))",
                route: route)
        }
        try authorize(current, "forcePresent", ancestorMayRequest: true)
        try validate(step.params, declaration, current)
        var child = current
        for ancestor in tree.ancestors(of: current.id) {
            guard let link = child.parent, var tabs = tree[ancestor] else { break }
            if tabs.kind == .tabs, let position = tabs.tabs.firstIndex(where: { $0.id == link.entry }),
                position != tabs.selectedTab
            {
                tabs.selectedTab = position
                put(tabs)
                effects.append(
                    .tabSelected(
                        instance: tabs.id, plugin: tabs.plugin, tab: tabs.tabs[position].route, isRepeat: false))
                noteAppearance(tabs)
            }
            child = tabs
        }
        return ask(
            current, declaration, params: step.params, index: index,
            purpose: .push(step.presentation ?? declaration.presentation), transition: presented)
    }
}
