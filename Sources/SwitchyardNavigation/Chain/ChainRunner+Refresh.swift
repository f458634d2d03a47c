import SwitchyardProtocol

// `refresh` (§12.1): a screen drawn from data (§21) shows what its owner answered when the entry opened; after an
// action that changed the data (a todo added, one completed), the owner asks for the screen again, in place.
extension ChainRunner {
    /// `refresh` + `entry` or `route`: asks the owner again what that entry shows (by `route`, the top-most entry of
    /// that route, the root included), with the entry's route, params and transition, and shows the answer in place.
    /// Only the owner may; the entry must show a screen (a coordinator is started afresh with `restart`).
    func refresh(_ current: Instance, _ step: NavigationStep, index: Int) throws(ResponseError) -> ChainNeed? {
        try authorize(current, "refresh")
        let target: Entry
        if let id = step.entry {
            guard let found = current.entry(id) else { throw .entryNotFound(current, id) }
            target = found
        } else if let route = step.route, !route.isEmpty {
            guard let found = current.allEntries.last(where: { $0.route == route }) else {
                throw .routeNotFound(current, route, "no entry of it to refresh")
            }
            target = found
        } else {
            throw ResponseError(
                .invalidParams, "step \(index) (refresh) needs 'entry' or 'route'",
                data: ["field": .string("steps[\(index)].route")])
        }
        guard case .screen = target.content else {
            throw .notAllowed(
                current,
                "entry \(target.id) ('\(target.route)') shows a coordinator: refresh asks again for a screen (start a coordinator afresh with restart)",
                route: target.route, entry: target.id)
        }
        let declaration = try routeDeclaration(current, target.route)
        return ask(
            current, declaration, params: target.params, index: index, purpose: .refresh(target.id),
            transition: target.transition)
    }

    /// Puts `content` into the entry `id` of `owner`, wherever it sits.
    func replaceContent(of id: EntryID, in owner: Instance, with content: Content) throws(ResponseError) {
        var updated = owner
        if updated.root?.id == id {
            updated.root?.content = content
        } else if let position = updated.entries.firstIndex(where: { $0.id == id }) {
            updated.entries[position].content = content
        } else if let position = updated.tabs.firstIndex(where: { $0.id == id }) {
            updated.tabs[position].content = content
        } else if updated.child?.id == id {
            updated.child?.content = content
        } else {
            throw .entryNotFound(owner, id)
        }
        put(updated)
    }
}
