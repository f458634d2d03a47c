package import SwitchyardProtocol

/// Runs a chain of navigation steps against a working copy of the tree, without I/O ("sans-I/O").
///
/// `advance()` runs until the chain is done, fails, or needs a plugin's answer; the caller sends the question to the
/// plugin and calls ``resume(with:)`` with the answer, then `advance()` again. Unit tests answer synchronously; the
/// host answers from plugin round trips on its loop. Every step either applies fully or the whole chain fails, and
/// the tree the chain started from is never modified (it is a value).
///
/// Complexity: each step is O(depth + entries of the instances it touches); unrelated instances are never visited.
public final class ChainRunner {
    /// Who asked: a plugin may only change its own instances (see `authorize`).
    public let requester: Requester
    // What the step switch (ChainRunner+Steps) and the answer handling (ChainRunner+Answers) share is internal;
    // the driving state only this file touches stays private.
    let registry: RouteRegistry
    let allocator: IDAllocator
    let steps: [NavigationStep]
    private let links: [Int: DeepLinkContext]
    let dismissReason: CoordinatorDismissedNotification.Reason
    let baseTree: NavigationTree
    /// Instances of types declared with `appearance` whose visible entry may have changed (§12.9); empty, and never
    /// looked at, while no type asks for appearance.
    var appearing = Set<InstanceID>()

    /// The working tree. Written only through ``put(_:)`` and ``destroySubtree(_:)`` (the setter is private to this
    /// file), so ``touched`` names every instance the chain changed: commits merge by it, and patches for watchers
    /// (the host's snapshot encoder) are built from it.
    private(set) var tree: NavigationTree
    var cursor: InstanceID
    var stepIndex = 0
    var pendingLanding: InstanceID?
    var effects: [ChainEffect] = []
    /// The destroys of the step being applied: they follow every report of that step (§12.1), also when the step
    /// removes entries of several coordinators (``flushDestroys()`` moves them to ``effects`` between steps).
    private var stepDestroys: [ChainEffect] = []
    /// Where the step's last report is in ``effects``: its destroys go right after it (before a tab selection the
    /// step made, as §12.9 orders them).
    private var stepReportsEnd: Int?
    var touched = Set<InstanceID>()
    /// How deep each coordinator created as another's initial content in this chain is nested (``maxInitialNesting``).
    var initialNesting: [InstanceID: Int] = [:]
    var created: [(instance: InstanceID, plugin: String, type: String)] = []
    private var removed = Set<InstanceID>()
    var creations: [CreateQuestion] = []
    /// Coordinators opened as initial content (a tab, a stack's root, a wrapper's child): if their plugin is not
    /// serving, they become placeholders instead of failing the coordinator that needs them.
    var degradable = Set<InstanceID>()
    private var creationHead = 0
    private var waiting: Waiting?
    private var failure: ResponseError?

    private enum Waiting {
        case route(RouteQuestion, RouteDeclaration, Purpose)
        case create(CreateQuestion)
    }

    enum Purpose {
        /// A new stack entry, with the presentation options it gets (the step's, else the route's).
        case push(PresentationOptions?)
        case setRoot(keepStack: Bool)
        /// A tab the instance lacks (its type declares it since the tree was saved): inserted in declaration order.
        case tab
        /// A tab `setTabs` adds: appended, and the step runs again until every tab it names is there.
        case addTab
        /// What an entry shows, asked again (`refresh`): the entry keeps its place and id.
        case refresh(EntryID)
    }

    /// A runner applying `steps` from `start` on a working copy of `tree`; `links` carries the deep-link context
    /// for the steps that came from one (by step index).
    package init(
        tree: NavigationTree, registry: RouteRegistry, allocator: IDAllocator, requester: Requester = .control,
        start: InstanceID, steps: [NavigationStep], links: [Int: DeepLinkContext] = [:],
        dismissReason: CoordinatorDismissedNotification.Reason = .navigation
    ) {
        self.baseTree = tree
        self.tree = tree
        self.registry = registry
        self.allocator = allocator
        self.requester = requester
        self.cursor = start
        self.steps = steps
        self.links = links
        self.dismissReason = dismissReason
    }

    /// A runner that creates the tree's root instance (no steps).
    package static func creatingRoot(
        tree: NavigationTree, registry: RouteRegistry, allocator: IDAllocator, root: RouteRegistry.TypeKey,
        params: JSONValue? = nil
    ) -> ChainRunner {
        let runner = ChainRunner(tree: tree, registry: registry, allocator: allocator, start: InstanceID(0), steps: [])
        runner.createRoot(root, params: params)
        return runner
    }

    // MARK: - Driving

    /// Runs until the chain is done, fails, or needs a plugin's answer (asked again until ``resume(with:)``).
    public func advance() -> ChainOutcome {
        if let failure { return .failed(ChainFailure(error: failure, created: created.reversed())) }
        if let waiting {
            switch waiting {
            case .route(let question, _, _): return .needs(.route(question))
            case .create(let question): return .needs(.create(question))
            }
        }
        while true {
            flushDestroys()
            if creationHead < creations.count {
                let question = creations[creationHead]
                creationHead += 1
                waiting = .create(question)
                return .needs(.create(question))
            }
            if let landing = pendingLanding {
                cursor = landing
                pendingLanding = nil
                stepIndex += 1
            }
            guard stepIndex < steps.count else {
                touched.formUnion(created.map(\.instance))
                if !appearing.isEmpty { effects += appearances() }
                return .done(
                    ChainResult(
                        tree: tree, landedOn: cursor, changed: tree != baseTree, effects: effects, touched: touched,
                        created: created.map(\.instance), undo: created.reversed(), removed: removed))
            }
            do throws(ResponseError) {
                if let question = try execute(steps[stepIndex], index: stepIndex) {
                    return .needs(question)
                }
            } catch {
                failure = error
                return .failed(ChainFailure(error: error, created: created.reversed()))
            }
        }
    }

    /// Gives the answer to the question the last `advance()` returned.
    public func resume(with answer: ChainAnswer) {
        guard let waiting else { return }
        self.waiting = nil
        do throws(ResponseError) {
            switch (waiting, answer) {
            case (.route(let question, let declaration, let purpose), .route(let result)):
                let answer = try result.mapError { $0.naming(question) }.get()
                try applyRouteAnswer(answer, question: question, declaration: declaration, purpose: purpose)
            case (.create(let question), .create(.failure(let error)))
            where error.code == .pluginUnavailable && degradable.contains(question.instance):
                becomePlaceholder(question.instance)
            case (.create(let question), .create(let result)):
                try applyCreateAnswer(try result.mapError { $0.naming(question) }.get(), question: question)
            default:
                throw ResponseError(.internalError, "chain answered with the wrong kind of answer")
            }
        } catch {
            failure = error
        }
    }

    // MARK: - What the steps share

    func instance(_ id: InstanceID) throws(ResponseError) -> Instance {
        guard let instance = tree[id] else { throw .instanceNotFound(id) }
        guard !instance.isPending else { throw .placeholder(instance) }
        touched.insert(id)
        return instance
    }

    /// Writes `instance` into the working tree and counts it as touched.
    func put(_ instance: Instance) {
        tree.put(instance)
        touched.insert(instance.id)
    }

    /// A creation that could not reach its plugin, of a coordinator the parent's initial content needs: it stays in
    /// the tree as a placeholder (created when the plugin is ready) and the chain goes on.
    private func becomePlaceholder(_ id: InstanceID) {
        guard var placeholder = tree[id] else { return }
        placeholder.kind = nil
        put(placeholder)
        created.removeAll { $0.instance == id }
    }

    func declaration(_ instance: Instance) throws(ResponseError) -> CoordinatorDeclaration {
        guard let declaration = registry.declaration(of: instance) else {
            throw ResponseError.pluginUnavailable(instance.plugin, "its route table is not available")
        }
        return declaration
    }

    func requireKind(_ instance: Instance, _ kinds: CoordinatorKind..., operation: String) throws(ResponseError) {
        guard let kind = instance.kind else { throw .placeholder(instance) }
        guard kinds.contains(kind) else {
            throw .notAllowed(
                instance,
                "\(operation) works on \(kinds.map(\.rawValue).joined(separator: " or ")) coordinators, not on \(kind.rawValue)"
            )
        }
    }

    /// Plugins may change their own instances; on others they may only take routes the owner decides, on an
    /// ancestor of one of their own instances.
    func authorize(_ instance: Instance, _ operation: String, ancestorMayRequest: Bool = false) throws(ResponseError) {
        guard case .plugin(let plugin) = requester, instance.plugin != plugin else { return }
        if ancestorMayRequest && isAncestorOfOwned(instance.id, by: plugin) { return }
        throw .notOwner(plugin, instance, operation)
    }

    private func isAncestorOfOwned(_ id: InstanceID, by plugin: String) -> Bool {
        tree.instances(of: plugin).contains { tree.ancestors(of: $0.id).contains(id) }
    }

    func land(_ id: InstanceID) {
        cursor = id
        stepIndex += 1
    }

    func routeDeclaration(_ instance: Instance, _ route: String) throws(ResponseError) -> RouteDeclaration {
        guard let declaration = try declaration(instance).route(named: route) else {
            throw .routeNotFound(instance, route)
        }
        return declaration
    }

    func selectTab(_ current: Instance, _ tab: String) throws(ResponseError) {
        guard let position = current.tabs.firstIndex(where: { $0.route == tab }) else {
            throw .routeNotFound(
                current, tab, "no such tab (tabs: \(current.tabs.map(\.route).joined(separator: ", ")))")
        }
        try authorize(current, "selectTab", ancestorMayRequest: true)
        let isRepeat = current.selectedTab == position
        if !isRepeat {
            var updated = current
            updated.selectedTab = position
            put(updated)
        }
        effects.append(.tabSelected(instance: current.id, plugin: current.plugin, tab: tab, isRepeat: isRepeat))
        if !isRepeat { noteAppearance(current) }
        land(current.tabs[position].content.coordinator ?? current.id)
    }

    func ask(
        _ instance: Instance, _ declaration: RouteDeclaration, params: JSONValue?, index: Int, purpose: Purpose,
        transition: Transition? = nil
    ) -> ChainNeed {
        let question = RouteQuestion(
            instance: instance.id, plugin: instance.plugin, type: instance.type, route: declaration.name,
            transition: transition ?? declaration.transition, params: params, link: links[index])
        waiting = .route(question, declaration, purpose)
        return .route(question)
    }

    /// Removes an instance from its parent: the entry holding it and everything above it in a stack. A wrapper is
    /// removed with its child; a tab cannot be dismissed, but finishing its flow finishes the whole tabs coordinator.
    func dismiss(_ current: Instance, finishingFlow: Bool) throws(ResponseError) -> InstanceID {
        let target = try tree.dismissalTarget(of: current.id, finishingFlow: finishingFlow)
        // The coordinators passed on the way up were read: a commit must find them as they were.
        for ancestor in tree.ancestors(of: current.id) {
            touched.insert(ancestor)
            if ancestor == target.parent { break }
        }
        try removeEntries(of: target.parent, from: target.position)
        return target.parent
    }

    /// Removes `entries[from...]` of a stack instance (see ``discard(_:of:)``).
    func removeEntries(of id: InstanceID, from position: Int) throws(ResponseError) {
        var owner = try instance(id)
        guard position < owner.entries.count else { return }
        discard(owner.entries[position...].reversed(), of: owner)
        owner.entries.removeSubrange(position...)
        put(owner)
        noteAppearance(owner)
    }

    /// Takes what `entries` of `owner` (top first) show out of the tree, as §12.1 says: every entry that leaves is
    /// reported to its owner, top first, the entries of a coordinator an entry held before that entry (they were
    /// shown above it); then every instance they held is destroyed, deepest first. The caller removes `entries`
    /// from `owner` itself.
    func discard<Entries: Sequence<Entry>>(_ entries: Entries, of owner: Instance) {
        var held: [InstanceID] = []
        for entry in entries {
            report(entry, of: owner, level: 0)
            if let child = entry.content.coordinator { held.append(child) }
        }
        for child in held { destroySubtree(child) }
    }

    /// Reports `entry` after everything the coordinator it holds shows (reversed display order: a child's
    /// wrapper child, its tabs last first, its stack entries top first, then its root).
    private func report(_ entry: Entry, of owner: Instance, level: Int) {
        if level < 10_000, let child = entry.content.coordinator, let instance = tree[child] {
            for inner in instance.allEntries.reversed() { report(inner, of: instance, level: level + 1) }
        }
        effects.append(
            .dismissed(
                instance: owner.id, plugin: owner.plugin, entry: entry.id, route: entry.route, reason: dismissReason))
        stepReportsEnd = effects.count
    }

    /// Takes an instance and everything below it out of the working tree; their destroys (deepest first, the later
    /// shown first) follow the step's reports.
    func destroySubtree(_ id: InstanceID) {
        let doomed = tree.subtree(of: id)
        for node in doomed {
            guard let instance = tree[node] else { continue }
            // A placeholder was never created in its plugin: there is nothing to destroy there.
            if !instance.isPending {
                stepDestroys.append(.destroy(instance: node, plugin: instance.plugin, type: instance.type))
            }
            tree.remove(node)
            removed.insert(node)
            touched.insert(node)
        }
    }

    /// Ends a step's effects: its destroys right after all its reports.
    private func flushDestroys() {
        defer { stepReportsEnd = nil }
        guard !stepDestroys.isEmpty else { return }
        effects.insert(contentsOf: stepDestroys, at: min(stepReportsEnd ?? effects.count, effects.count))
        stepDestroys.removeAll()
    }

    private func createRoot(_ root: RouteRegistry.TypeKey, params: JSONValue?) {
        guard let declaration = registry.declaration(plugin: root.plugin, type: root.type) else {
            failure = .pluginUnavailable(root.plugin, "it does not serve the root type \(root.type)")
            return
        }
        let id = allocator.instance()
        put(
            Instance(
                id: id, plugin: root.plugin, type: root.type, kind: declaration.kind, parent: nil, params: params,
                version: tree.revision))
        tree.setRoot(id)
        created.append((id, root.plugin, root.type))
        creations.append(
            CreateQuestion(
                instance: id, plugin: root.plugin, type: root.type, reason: .new, params: params, parent: nil,
                state: nil))
        cursor = id
    }

    // MARK: - Params

    func validate(_ params: JSONValue?, _ route: RouteDeclaration, _ instance: Instance) throws(ResponseError) {
        if let reason = routeParamsProblem(params, route.params) {
            throw .invalidRouteParams(instance, route.name, reason)
        }
    }
}
