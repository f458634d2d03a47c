import SwitchyardProtocol

// Plugin answers, checked against the route table before anything lands in the tree.
extension ChainRunner {
    func applyRouteAnswer(
        _ answer: CoordinatorRouteRequest.Result, question: RouteQuestion, declaration: RouteDeclaration,
        purpose: Purpose
    ) throws(ResponseError) {
        var owner = try instance(question.instance)
        let entryID: EntryID
        if case .refresh(let refreshed) = purpose { entryID = refreshed } else { entryID = allocator.entry() }
        let content = try materialize(
            answer.content, route: declaration, owner: owner, entry: entryID, params: question.params,
            initial: purpose.isTab)
        owner = tree[owner.id] ?? owner
        if let state = answer.state { owner.state = state }
        var entry = Entry(
            id: entryID, route: declaration.name, transition: question.transition, params: question.params,
            content: content, badge: purpose.isTab ? declaration.tabItem?.badge : nil)
        switch purpose {
        case .push(let presentation):
            entry.presentation = presentation
            owner.entries.append(entry)
            put(owner)
        case .setRoot(let keepStack):
            // The old root goes, and with it (unless kept) what it showed above: all reported, top first.
            let replaced = (keepStack ? [] : owner.entries.reversed()) + (owner.root.map { [$0] } ?? [])
            put(owner)
            discard(replaced, of: owner)
            var updated = try instance(owner.id)
            if !keepStack { updated.entries = [] }
            updated.root = entry
            put(updated)
        case .tab:
            // In declaration order among the tabs it has; the selected tab stays the same tab.
            let order = try self.declaration(owner).routes.filter { $0.transition == .tab }.map(\.name)
            let rank = { (route: String) in order.firstIndex(of: route) ?? order.count }
            guard !owner.tabs.contains(where: { $0.route == declaration.name }) else {
                throw .invalidAnswer(
                    owner.plugin, "\(ResponseError.describe(owner)) already has the tab '\(declaration.name)'",
                    instance: owner)
            }
            let position = owner.tabs.firstIndex { rank($0.route) > rank(declaration.name) } ?? owner.tabs.count
            owner.tabs.insert(entry, at: position)
            if owner.tabs.count > 1, position <= owner.selectedTab { owner.selectedTab += 1 }
            put(owner)
        case .addTab:
            // `setTabs` asked for it: appended for now, and the step runs again (the next new tab, or the order).
            owner.tabs.append(entry)
            put(owner)
            return
        case .refresh(let refreshed):
            // The same entry shows what its owner answers now: its id, params and presentation stay.
            try replaceContent(of: refreshed, in: owner, with: content)
        }
        pendingLanding = content.coordinator ?? owner.id
    }

    func applyCreateAnswer(_ answer: CoordinatorCreateRequest.Result, question: CreateQuestion) throws(ResponseError) {
        var created = try instance(question.instance)
        let declaration = try declaration(created)
        func route(_ name: String, _ transition: Transition) throws(ResponseError) -> RouteDeclaration {
            guard let route = declaration.route(named: name), route.transition == transition else {
                throw .invalidAnswer(
                    created.plugin, "'\(name)' is not a \(transition.rawValue) route of \(created.type)",
                    instance: created, route: name)
            }
            return route
        }
        switch created.kind {
        case nil:
            throw .placeholder(created)
        case .stack:
            guard let root = answer.root else {
                throw .invalidAnswer(
                    created.plugin, "the created stack \(created.type) needs 'root'", instance: created)
            }
            let declared = try route(root.route, .root)
            try validate(root.params, declared, created)
            let entryID = allocator.entry()
            let content = try materialize(
                root.content, route: declared, owner: created, entry: entryID, params: root.params, initial: true)
            created = tree[created.id] ?? created
            created.root = Entry(
                id: entryID, route: declared.name, transition: .root, params: root.params, content: content)
        case .tabs:
            let declaredTabs = declaration.routes.filter { $0.transition == .tab }
            // Usually every declared tab in order; an owner with dynamic tabs (§12.7) may start with some of them, in
            // its own order (SUICoordinator's `setPages` at start).
            let given = answer.tabs?.map(\.route) ?? []
            guard let tabs = answer.tabs, !tabs.isEmpty, Set(given).count == given.count,
                given.allSatisfy({ name in declaredTabs.contains { $0.name == name } })
            else {
                throw .invalidAnswer(
                    created.plugin,
                    "the created tabs \(created.type) must give declared tabs, each once (declared: \(declaredTabs.map(\.name)); given: \(given))",
                    instance: created)
            }
            var entries: [Entry] = []
            for tab in tabs {
                guard let declared = declaredTabs.first(where: { $0.name == tab.route }) else { continue }
                let entryID = allocator.entry()
                let content = try materialize(
                    tab.content, route: declared, owner: created, entry: entryID, params: nil, initial: true)
                entries.append(
                    Entry(
                        id: entryID, route: declared.name, transition: .tab, params: nil, content: content,
                        badge: declared.tabItem?.badge))
            }
            created = tree[created.id] ?? created
            created.tabs = entries
            created.dynamicTabs = given != declaredTabs.map(\.name)
            let selected = answer.selectedTab ?? declaration.initialRoute ?? entries.first?.route
            created.selectedTab = entries.firstIndex { $0.route == selected } ?? 0
        case .wrapper:
            guard let child = answer.child, let declared = declaration.routes.first(where: { $0.transition == .child })
            else {
                throw .invalidAnswer(
                    created.plugin, "the created wrapper \(created.type) needs 'child'", instance: created)
            }
            let entryID = allocator.entry()
            let content = try materialize(
                child, route: declared, owner: created, entry: entryID, params: nil, initial: true)
            created = tree[created.id] ?? created
            created.child = Entry(id: entryID, route: declared.name, transition: .child, params: nil, content: content)
        }
        if let state = answer.state { created.state = state }
        put(created)
    }

    /// Turns a plugin's content into tree content, checking it against the route's declaration; a coordinator is
    /// created (as an empty instance now, filled in when its plugin answers `coordinator/create`).
    ///
    /// `initial`: the content is part of what the owner needs to exist at all (a tab, a stack's root, a wrapper's
    /// child). A coordinator there whose plugin does not serve becomes a placeholder (``Instance/isPending``) instead
    /// of failing the owner: one missing plugin must not take a whole tab bar (and the sign-in that opens it) down.
    /// A route the user takes to an unavailable plugin fails as before.
    private func materialize(
        _ content: RouteContent, route: RouteDeclaration, owner: Instance, entry: EntryID, params: JSONValue?,
        initial: Bool
    ) throws(ResponseError) -> Content {
        switch content {
        case .screen(let screen):
            if let target = RouteRegistry.target(of: route, declaredBy: owner.plugin) {
                throw .invalidAnswer(
                    owner.plugin, "route '\(route.name)' opens \(target), but the answer is a screen", instance: owner,
                    route: route.name)
            }
            // Screens as data (§21): every element a shell will draw, and every action it will send, is checked now,
            // so a tap can only ever send what the route declares.
            if let problem = ScreenContentCheck.problem(in: screen, route: route) {
                throw .screenContent(problem, plugin: owner.plugin, instance: owner, route: route.name)
            }
            return .screen(screen)
        case .coordinator(let reference, let createParams):
            guard let target = RouteRegistry.target(of: route, declaredBy: owner.plugin) else {
                throw .invalidAnswer(
                    owner.plugin, "route '\(route.name)' declares no target, so it must show a screen", instance: owner,
                    route: route.name)
            }
            let answered = RouteRegistry.TypeKey(plugin: reference.plugin ?? owner.plugin, type: reference.type)
            guard answered == target else {
                throw .invalidAnswer(
                    owner.plugin, "route '\(route.name)' opens \(target), but the answer is \(answered)",
                    instance: owner, route: route.name)
            }
            let declaration = registry.declaration(plugin: target.plugin, type: target.type)
            // A plugin whose table is unknown (missing, failed or excluded at start) can only be waited for.
            let placeholder = declaration == nil && initial && !registry.has(plugin: target.plugin)
            guard declaration != nil || placeholder else {
                throw ResponseError.pluginUnavailable(
                    target.plugin, "it does not serve \(target.type) (excluded, missing or failed)")
            }
            // The type's declared creation params are its contract with whoever opens it (§5, §14).
            if let reason = routeParamsProblem(createParams, declaration?.params) {
                throw .invalidAnswer(
                    owner.plugin, "route '\(route.name)' opens \(target) with params it does not take: \(reason)",
                    instance: owner, route: route.name)
            }
            let depth = initial ? try checkInitialNesting(opening: target, from: owner) : nil
            let id = allocator.instance()
            if let depth { initialNesting[id] = depth }
            let child = Instance(
                id: id, plugin: target.plugin, type: target.type, kind: declaration?.kind,
                parent: InstanceSnapshot.ParentLink(instance: owner.id, entry: entry), params: createParams,
                version: tree.revision)
            put(child)
            guard !placeholder else { return .coordinator(id) }
            if initial { degradable.insert(id) }
            created.append((id, target.plugin, target.type))
            creations.append(
                CreateQuestion(
                    instance: id, plugin: target.plugin, type: target.type, reason: .new, params: createParams,
                    parent: CoordinatorCreateRequest.Parent(
                        instance: owner.id, plugin: owner.plugin, route: route.name),
                    state: nil))
            return .coordinator(id)
        }
    }
}

extension ChainRunner {
    /// How deep coordinators may open each other as initial content within one chain: far above any real app's
    /// nesting, and low enough that a cycle the composition check cannot see (a plugin answering `create` with other
    /// content than its table declares) ends at once, with the path, instead of creating instances until
    /// `maxInstances` (spec §5).
    static let maxInitialNesting = 32

    /// The nesting depth a coordinator opened as `owner`'s initial content gets (1 for a coordinator nothing in this
    /// chain opened that way); fails with `limitExceeded` past ``maxInitialNesting``, naming the types on the way.
    /// O(1) per creation: the depth of each instance created this way is kept (``initialNesting``).
    func checkInitialNesting(opening target: RouteRegistry.TypeKey, from owner: Instance) throws(ResponseError) -> Int {
        let depth = (initialNesting[owner.id] ?? 1) + 1
        guard depth > Self.maxInitialNesting else { return depth }
        var path = [target.description]
        var at: Instance? = owner
        while let current = at, path.count < 6 {
            path.append("\(current.plugin).\(current.type)")
            at = current.parent.flatMap { tree[$0.instance] }
        }
        var error = ResponseError.limitExceeded(
            "maxInitialNesting", max: Self.maxInitialNesting, actual: depth, field: "content",
            what: "coordinators opened by each other's initial content")
        error.message +=
            ": … → \(path.reversed().joined(separator: " → ")) (a cycle? each creates the next as its first content)"
        throw error
    }
}

extension ChainRunner.Purpose {
    var isTab: Bool {
        switch self {
        case .tab, .addTab: true
        case .push, .setRoot, .refresh: false
        }
    }
}
