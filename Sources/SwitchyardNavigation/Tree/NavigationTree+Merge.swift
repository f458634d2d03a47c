import HashTreeCollections
public import SwitchyardProtocol

/// A saved tree fitted to the route tables of today (spec §17): what the tables still declare is kept as it was
/// saved, what they no longer declare is dropped, and what they declare and the tree lacks is listed for the
/// owning plugins to give content for.
public struct TreeMerge: Sendable {
    /// A part of the saved tree that the route tables no longer declare. It is left out of the tree before anything
    /// is restored, so no plugin ever hears of it.
    public struct Dropped: Sendable, Equatable, CustomStringConvertible {
        public enum Part: Sendable, Equatable {
            case instance(InstanceID, plugin: String, type: String)
            case entry(EntryID, route: String, of: InstanceID, plugin: String, type: String)
        }

        public let part: Part
        public let reason: String

        public var description: String {
            switch part {
            case .instance(let id, let plugin, let type): "instance \(plugin).\(type)\(id): \(reason)"
            case .entry(let entry, let route, let id, let plugin, let type):
                "entry '\(route)' [\(entry)] of \(plugin).\(type)\(id): \(reason)"
            }
        }
    }

    /// Content an instance must have that the saved tree lacks.
    public enum Missing: Sendable, Equatable {
        /// A tab its type declares now: the owner gives it (``ChainRunner/addingTab(tree:registry:allocator:instance:tab:)``).
        case tab(InstanceID, route: String)
        /// A stack's root or a wrapper's child whose route is no longer declared: the instance is restarted (a
        /// `restart` step: `coordinator/create` with reason `restart`, the initial content afresh).
        case content(InstanceID)
    }

    /// The fitted tree. Its revision is one past the saved one when anything was dropped.
    public let tree: NavigationTree
    /// What was left out, deepest first (an instance's descendants before it, an entry after what it held).
    public let dropped: [Dropped]
    /// What the owners must give content for, parents before children and tabs in declaration order.
    public let missing: [Missing]
}

extension NavigationTree {
    /// Fits this (saved) tree to `registry`, the route tables composed today. Pure: the tree is a value, nothing is
    /// sent anywhere.
    ///
    /// - An instance of a plugin the manifest no longer names (`plugins`), or of a type its plugin no longer
    ///   declares or now declares with another kind, is dropped with everything below it.
    /// - An entry is kept only if its route is still declared with the same transition and its content still fits
    ///   the route (a screen where the route opens nothing, the declared coordinator type where it opens one). A
    ///   stack entry that does not fit is dropped with every entry above it (a stack is a path); a tab that does not
    ///   fit, or is missing, is given afresh by its owner; a stack root or a wrapper child that does not fit makes
    ///   the instance lose its content, which its owner gives afresh (``TreeMerge/Missing``).
    /// - An instance whose plugin's table is unknown (it is not serving) is kept as saved with everything below it,
    ///   and so are placeholders of declared types: they are judged by what they will be created as.
    /// - Instances the root does not reach are dropped.
    public func merged(with registry: RouteRegistry, plugins: Set<String>) -> TreeMerge {
        var result = self
        var dropped: [TreeMerge.Dropped] = []
        var missing: [TreeMerge.Missing] = []

        /// Drops what is left of an instance and below it (parts dropped earlier are not named twice).
        func dropSubtree(_ id: InstanceID, _ reason: String) {
            for node in result.subtree(of: id) {
                guard let instance = result[node] else { continue }
                dropped.append(
                    .init(
                        part: .instance(node, plugin: instance.plugin, type: instance.type),
                        reason: node == id ? reason : "below a dropped instance"))
                result.remove(node)
            }
        }
        func dropEntry(_ entry: Entry, of owner: Instance, _ reason: String) {
            if let child = entry.content.coordinator { dropSubtree(child, "held by a dropped entry") }
            dropped.append(
                .init(
                    part: .entry(entry.id, route: entry.route, of: owner.id, plugin: owner.plugin, type: owner.type),
                    reason: reason))
        }
        /// Why `entry` no longer fits a slot of `transitions` in `owner` (nil: it fits); fits the coordinator it holds.
        func misfit(
            _ entry: Entry, in owner: Instance, _ declaration: CoordinatorDeclaration, _ transitions: [Transition],
            level: Int
        ) -> String? {
            guard let route = declaration.route(named: entry.route) else {
                return "\(owner.plugin).\(owner.type) no longer declares the route '\(entry.route)'"
            }
            // A stack entry may have been presented with another transition its route allows (§12.8).
            guard route.allows(entry.transition), transitions.contains(route.transition) else {
                return
                    "route '\(entry.route)' is now a \(route.transition.rawValue) route, the saved entry a \(entry.transition.rawValue) one"
            }
            let target = RouteRegistry.target(of: route, declaredBy: owner.plugin)
            switch (entry.content, target) {
            case (.screen, nil):
                return nil
            case (.screen, let target?):
                return "route '\(entry.route)' now opens \(target), the saved entry shows a screen"
            case (.coordinator, nil):
                return "route '\(entry.route)' now shows a screen, the saved entry holds a coordinator"
            case (.coordinator(let child), let target?):
                guard let held = self[child] else { return "the saved entry holds a missing instance \(child)" }
                let heldKey = RouteRegistry.TypeKey(plugin: held.plugin, type: held.type)
                guard heldKey == target else {
                    return "route '\(entry.route)' now opens \(target), the saved entry holds \(heldKey)"
                }
                return visit(child, level: level + 1) ? nil : "its coordinator was dropped"
            }
        }
        /// Fits one instance and what it holds; false if it was dropped.
        func visit(_ id: InstanceID, level: Int) -> Bool {
            guard level < 10_000, var instance = self[id] else { return false }
            guard plugins.contains(instance.plugin) else {
                dropSubtree(id, "the manifest no longer names plugin '\(instance.plugin)'")
                return false
            }
            // Not serving: its table is unknown, so it stays as saved until a start that knows it.
            guard registry.has(plugin: instance.plugin) else { return true }
            guard let declaration = registry.declaration(plugin: instance.plugin, type: instance.type) else {
                dropSubtree(id, "plugin '\(instance.plugin)' no longer declares the type '\(instance.type)'")
                return false
            }
            guard let kind = instance.kind else { return true }  // a placeholder: created as the table says
            guard declaration.kind == kind else {
                dropSubtree(
                    id,
                    "\(instance.plugin).\(instance.type) is now a \(declaration.kind.rawValue) coordinator, the saved one a \(kind.rawValue)"
                )
                return false
            }
            switch kind {
            case .stack:
                if let root = instance.root, let reason = misfit(root, in: instance, declaration, [.root], level: level)
                {
                    for entry in instance.entries.reversed() { dropEntry(entry, of: instance, "above a dropped root") }
                    dropEntry(root, of: instance, reason)
                    instance.root = nil
                    instance.entries = []
                    missing.append(.content(id))
                }
                for (index, entry) in instance.entries.enumerated() {
                    guard
                        let reason = misfit(
                            entry, in: instance, declaration, [.push, .modal, .fullScreen], level: level)
                    else { continue }
                    for above in instance.entries[(index + 1)...].reversed() {
                        dropEntry(above, of: instance, "above a dropped entry")
                    }
                    dropEntry(entry, of: instance, reason)
                    instance.entries.removeSubrange(index...)
                    break
                }
            case .tabs:
                let selected = instance.selectedTabEntry?.route
                var tabs: [Entry] = []
                // Tabs the owner set at run time stay as they were (order and set); otherwise the declared set, in
                // declaration order, with what the file lacks asked of the owner.
                let order =
                    instance.dynamicTabs
                    ? instance.tabs.map(\.route) : declaration.routes.filter { $0.transition == .tab }.map(\.name)
                for route in order where declaration.route(named: route)?.transition == .tab {
                    if let tab = instance.tabs.first(where: { $0.route == route }) {
                        guard let reason = misfit(tab, in: instance, declaration, [.tab], level: level) else {
                            tabs.append(tab)
                            continue
                        }
                        dropEntry(tab, of: instance, reason)
                    }
                    missing.append(.tab(id, route: route))
                }
                for tab in instance.tabs
                where !declaration.routes.contains(where: { $0.name == tab.route && $0.transition == .tab }) {
                    dropEntry(
                        tab, of: instance,
                        "\(instance.plugin).\(instance.type) no longer declares the tab '\(tab.route)'")
                }
                instance.tabs = tabs
                instance.selectedTab = tabs.firstIndex { $0.route == selected } ?? 0
            case .wrapper:
                if let child = instance.child,
                    let reason = misfit(child, in: instance, declaration, [.child], level: level)
                {
                    dropEntry(child, of: instance, reason)
                    instance.child = nil
                    missing.append(.content(id))
                }
            }
            if instance != self[id] { result.put(instance) }
            return true
        }

        if let rootID, !visit(rootID, level: 0) { result.setRoot(nil) }
        let reachable = Set(result.rootID.map { result.subtree(of: $0) } ?? [])
        for id in instances.keys.sorted() where result[id] != nil && !reachable.contains(id) {
            dropSubtree(id, "the root does not reach it")
        }
        if !dropped.isEmpty { result.revision += 1 }
        return TreeMerge(tree: result, dropped: dropped, missing: missing)
    }
}
