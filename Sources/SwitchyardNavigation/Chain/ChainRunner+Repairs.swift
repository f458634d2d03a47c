package import SwitchyardProtocol

// Chains that bring the tree up to what the route tables declare, outside any user navigation: a tab a restored
// tree lacks (spec §17), a placeholder whose plugin now serves (spec §11), and content a restored instance lost
// (a `restart` step, which needs no runner of its own).
extension ChainRunner {
    /// A runner that gives `instance` the tab `tab`, which its type declares but the instance lacks (the tree was
    /// saved before the tab existed): the owner answers `coordinator/route` for it (transition `tab`), and the
    /// entry goes in declaration order among the tabs the instance has. A coordinator the tab opens is created
    /// as a tab's would be, a placeholder if its plugin does not serve.
    package static func addingTab(
        tree: NavigationTree, registry: RouteRegistry, allocator: IDAllocator, instance: InstanceID, tab: String
    ) throws(ResponseError) -> ChainRunner {
        let runner = ChainRunner(tree: tree, registry: registry, allocator: allocator, start: instance, steps: [])
        let owner = try runner.instance(instance)
        let declaration = try runner.routeDeclaration(owner, tab)
        guard declaration.transition == .tab else {
            throw .notAllowed(
                owner, "route '\(tab)' is a \(declaration.transition.rawValue) route, not a tab", route: tab)
        }
        guard !owner.tabs.contains(where: { $0.route == tab }) else {
            throw .notAllowed(owner, "it already has the tab '\(tab)'", route: tab)
        }
        _ = runner.ask(owner, declaration, params: nil, index: 0, purpose: .tab)
        return runner
    }

    /// A runner that creates a placeholder in its plugin, which now serves: `coordinator/create` with reason `new`,
    /// the params it was opened with and its place in the tree, as when its parent was created.
    package static func creatingPlaceholder(
        tree: NavigationTree, registry: RouteRegistry, allocator: IDAllocator, instance id: InstanceID
    ) throws(ResponseError) -> ChainRunner {
        guard var placeholder = tree[id] else { throw .instanceNotFound(id) }
        guard placeholder.isPending else {
            throw .notAllowed(placeholder, "it is not a placeholder: its plugin has created it already")
        }
        guard let declaration = registry.declaration(plugin: placeholder.plugin, type: placeholder.type) else {
            throw .pluginUnavailable(
                placeholder.plugin, "it does not serve \(placeholder.type) (excluded, missing or failed)")
        }
        let runner = ChainRunner(tree: tree, registry: registry, allocator: allocator, start: id, steps: [])
        placeholder.kind = declaration.kind
        runner.put(placeholder)
        runner.created.append((id, placeholder.plugin, placeholder.type))
        let parent = placeholder.parent.flatMap { link -> CoordinatorCreateRequest.Parent? in
            guard let owner = tree[link.instance], let entry = owner.entry(link.entry) else { return nil }
            return CoordinatorCreateRequest.Parent(instance: owner.id, plugin: owner.plugin, route: entry.route)
        }
        runner.creations.append(
            CreateQuestion(
                instance: id, plugin: placeholder.plugin, type: placeholder.type, reason: .new,
                params: placeholder.params,
                parent: parent, state: nil))
        return runner
    }
}
