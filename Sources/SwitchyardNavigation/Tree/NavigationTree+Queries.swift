public import SwitchyardProtocol

// Read-only questions about the tree: Stinsen's isRoot/hasRoot/currentRoute/isInStack and SUICoordinator's
// topCoordinator. O(depth) each.
extension NavigationTree {
    /// The top-most visible coordinator from `id`: the last entry's coordinator, else the root's, recursively; for
    /// tabs the selected tab; for a wrapper its child.
    public func topCoordinator(from id: InstanceID) -> InstanceID {
        var current = id
        for _ in 0..<10_000 {
            guard let instance = self[current] else { return current }
            let next: InstanceID?
            switch instance.kind {
            case .stack: next = instance.entries.last.map(\.content.coordinator) ?? instance.root?.content.coordinator
            case .tabs: next = instance.selectedTabEntry?.content.coordinator
            case .wrapper: next = instance.child?.content.coordinator
            case nil: next = nil  // a placeholder shows nothing yet
            }
            guard let next else { return current }
            current = next
        }
        return current
    }

    public func isRoot(_ id: InstanceID, route: String, params: JSONValue? = nil) throws(ResponseError) -> Bool {
        guard let instance = self[id] else { throw .instanceNotFound(id) }
        guard let root = instance.root else { return false }
        return root.route == route && (params == nil || sameParams(root.params, params))
    }

    /// The root's coordinator if the root is `route`; nil if it is another route or shows a screen.
    public func hasRoot(_ id: InstanceID, route: String, params: JSONValue? = nil) throws(ResponseError) -> InstanceID?
    {
        guard try isRoot(id, route: route, params: params) else { return nil }
        return self[id]?.root?.content.coordinator
    }

    /// The top-most route of a stack (its last entry, else its root); a tabs coordinator's selected tab.
    public func currentRoute(_ id: InstanceID) throws(ResponseError) -> String? {
        guard let instance = self[id] else { throw .instanceNotFound(id) }
        switch instance.kind {
        case .stack: return instance.entries.last?.route ?? instance.root?.route
        case .tabs: return instance.selectedTabEntry?.route
        case .wrapper: return instance.child?.route
        case nil: return nil
        }
    }

    public func isInStack(_ id: InstanceID, route: String, params: JSONValue? = nil) throws(ResponseError) -> Bool {
        guard let instance = self[id] else { throw .instanceNotFound(id) }
        return instance.entries.contains { $0.route == route && (params == nil || sameParams($0.params, params)) }
    }

    /// Whether `dismissCoordinator` of the instance would succeed: it is held by a pushed or presented entry of a
    /// stack, or is the child of a wrapper that could be dismissed itself (not a root, not a tab).
    public func canDismiss(_ id: InstanceID) throws(ResponseError) -> Bool {
        guard self[id] != nil else { throw .instanceNotFound(id) }
        return (try? dismissalTarget(of: id)) != nil
    }

    /// What dismissing the instance removes (§12.1): the entry of the stack that holds it, at `position`, with
    /// everything above it. A wrapper goes with its child; a tab cannot be dismissed, but finishing its flow
    /// (`finishingFlow`) finishes the whole tabs coordinator. The one statement of these rules: `dismissCoordinator`
    /// and `finishFlow` apply it, `canDismiss` asks it.
    public func dismissalTarget(
        of id: InstanceID, finishingFlow: Bool = false
    ) throws(ResponseError) -> (parent: InstanceID, position: Int) {
        guard var current = self[id] else { throw .instanceNotFound(id) }
        for _ in 0..<10_000 {
            guard let link = current.parent else { throw .notAllowed(current, "the tree's root cannot be dismissed") }
            guard let parent = self[link.instance] else { throw .instanceNotFound(link.instance) }
            switch parent.kind {
            case nil:
                throw .placeholder(parent)
            case .stack:
                guard let position = parent.entries.firstIndex(where: { $0.id == link.entry }) else {
                    throw .notAllowed(
                        current, "it is the root of \(ResponseError.describe(parent)); set another root there instead")
                }
                return (parent.id, position)
            case .wrapper:
                current = parent
            case .tabs:
                guard finishingFlow else {
                    throw .notAllowed(
                        current,
                        "it is a tab of \(ResponseError.describe(parent)); tabs cannot be dismissed (finishFlow ends the whole tabs coordinator)"
                    )
                }
                current = parent
            }
        }
        throw .notAllowed(current, "it is nested more than 10,000 coordinators deep")
    }

    /// The most recently created instance of a type: ids only grow, so the highest. O(instances of the plugin).
    public func newest(plugin: String, type: String) -> InstanceID? {
        instances(of: plugin).filter { $0.type == type }.map(\.id).max()
    }

    /// Answers a `tree/query`.
    public func answer(_ query: TreeQueryRequest.Params) throws(ResponseError) -> JSONValue {
        if query.query == .newest {
            guard let plugin = query.plugin, let type = query.type else {
                throw ResponseError(
                    .invalidParams, "newest needs 'plugin' and 'type'",
                    data: ["field": .string(query.plugin == nil ? "plugin" : "type")])
            }
            return newest(plugin: plugin, type: type).map { .int($0.rawValue) } ?? .null
        }
        guard let id = query.instance ?? rootID else { throw ResponseError(.instanceNotFound, "the tree is empty") }
        func route() throws(ResponseError) -> String {
            guard let route = query.route else {
                throw ResponseError(.invalidParams, "\(query.query.rawValue) needs 'route'", data: ["field": "route"])
            }
            return route
        }
        switch query.query {
        case .isRoot: return .bool(try isRoot(id, route: try route(), params: query.params))
        case .hasRoot:
            return try hasRoot(id, route: try route(), params: query.params).map { .int($0.rawValue) } ?? .null
        case .currentRoute: return try currentRoute(id).map(JSONValue.string) ?? .null
        case .isInStack: return .bool(try isInStack(id, route: try route(), params: query.params))
        case .topCoordinator:
            guard self[id] != nil else { throw .instanceNotFound(id) }
            return .int(topCoordinator(from: id).rawValue)
        case .canDismiss: return .bool(try canDismiss(id))
        case .hasParent:
            guard let instance = self[id] else { throw .instanceNotFound(id) }
            return .bool(instance.parent != nil)
        case .presentedCount:
            guard let instance = self[id] else { throw .instanceNotFound(id) }
            return .int(Int64(instance.entries.count { $0.transition.isModal }))
        case .newest: return .null  // answered above
        }
    }
}

/// Route params are equal when their JSON is equal; absent, null and {} all mean "no params".
public func sameParams(_ lhs: JSONValue?, _ rhs: JSONValue?) -> Bool {
    func normalized(_ value: JSONValue?) -> JSONValue? {
        switch value {
        case nil, .null?: nil
        case .object(let object)? where object.isEmpty: nil
        default: value
        }
    }
    return normalized(lhs) == normalized(rhs)
}

extension NavigationTree {
    /// The first entry presented with `interactiveDismissDisabled` (§12.8) that removing `entries` of `owner` would
    /// take out of the tree, in display order: one of them, or an entry shown by a coordinator one of them holds, in
    /// any stack below (§12.3). A user's dismissal that would take it is refused: the option binds the user
    /// everywhere below the locked entry (SwiftUI's meaning; Stinsen's `.modalNonDismissible`).
    public func lockedEntry<Entries: Sequence<Entry>>(
        removing entries: Entries, of owner: Instance
    ) -> (owner: Instance, entry: Entry)? {
        lockedEntry(removing: entries, of: owner, level: 0)
    }

    private func lockedEntry<Entries: Sequence<Entry>>(
        removing entries: Entries, of owner: Instance, level: Int
    ) -> (owner: Instance, entry: Entry)? {
        for entry in entries {
            if entry.presentation?.interactiveDismissDisabled == true { return (owner, entry) }
            if level < 10_000, let child = entry.content.coordinator, let shown = self[child],
                let locked = lockedEntry(removing: shown.allEntries, of: shown, level: level + 1)
            {
                return locked
            }
        }
        return nil
    }
}
