public import SwitchyardProtocol

/// Who asked for a chain: a control client (anything goes) or a plugin (ownership rules apply).
public enum Requester: Sendable, Equatable {
    case control
    case plugin(String)
}

/// A question only a plugin can answer: what a route shows (`coordinator/route`).
public struct RouteQuestion: Sendable, Equatable {
    public let instance: InstanceID
    public let plugin: String
    public let type: String
    public let route: String
    public let transition: Transition
    public let params: JSONValue?
    public let link: DeepLinkContext?

    public var request: CoordinatorRouteRequest.Params {
        .init(instance: instance, type: type, route: route, transition: transition, params: params, link: link)
    }
}

/// A new (or restarted) instance whose plugin must give its initial content (`coordinator/create`).
public struct CreateQuestion: Sendable, Equatable {
    public let instance: InstanceID
    public let plugin: String
    public let type: String
    public let reason: CoordinatorCreateRequest.Reason
    public let params: JSONValue?
    public let parent: CoordinatorCreateRequest.Parent?
    public let state: JSONValue?

    public var request: CoordinatorCreateRequest.Params {
        .init(instance: instance, type: type, reason: reason, params: params, parent: parent, state: state)
    }
}

/// What a chain is waiting for.
public enum ChainNeed: Sendable, Equatable {
    case route(RouteQuestion)
    case create(CreateQuestion)

    /// The plugin that must answer.
    public var plugin: String {
        switch self {
        case .route(let question): question.plugin
        case .create(let question): question.plugin
        }
    }
}

/// What the caller got from the plugin.
public enum ChainAnswer: Sendable {
    case route(Result<CoordinatorRouteRequest.Result, ResponseError>)
    case create(Result<CoordinatorCreateRequest.Result, ResponseError>)
}

/// Messages to send to plugins once a chain has been committed.
public enum ChainEffect: Sendable, Equatable {
    /// `coordinator/destroy`; emitted deepest first.
    case destroy(instance: InstanceID, plugin: String, type: String)
    /// `coordinator/dismissed` to the owner of the instance the entry left.
    case dismissed(instance: InstanceID, plugin: String, entry: EntryID, route: String, reason: CoordinatorDismissedNotification.Reason)
    /// `coordinator/tabSelected`.
    case tabSelected(instance: InstanceID, plugin: String, tab: String, isRepeat: Bool)
}

/// A chain that applied completely (on its working tree; committing is the caller's business).
public struct ChainResult: Sendable {
    /// The working tree with every step applied (revision not bumped yet).
    public let tree: NavigationTree
    public let landedOn: InstanceID
    /// Whether the tree differs from where the chain started.
    public let changed: Bool
    public let effects: [ChainEffect]
    /// Every instance the chain read or wrote (for optimistic concurrency at commit).
    public let touched: Set<InstanceID>
    /// Instances created by the chain.
    public let created: [InstanceID]
    /// Instances removed by the chain (including some it created).
    public let removed: Set<InstanceID>
}

/// A chain that failed. The tree it started from is untouched; the instances it created in plugins must be
/// destroyed.
public struct ChainFailure: Error, Sendable {
    public let error: ResponseError
    public let created: [(instance: InstanceID, plugin: String, type: String)]
}

public enum ChainOutcome: Sendable {
    case needs(ChainNeed)
    case done(ChainResult)
    case failed(ChainFailure)
}

/// Runs a chain of navigation steps against a working copy of the tree, without I/O ("sans-I/O").
///
/// `advance()` runs until the chain is done, fails, or needs a plugin's answer; the caller sends the question to the
/// plugin and calls ``resume(with:)`` with the answer, then `advance()` again. Unit tests answer synchronously; the
/// host answers from plugin round trips on its loop. Every step either applies fully or the whole chain fails, and
/// the tree the chain started from is never modified (it is a value).
///
/// Complexity: each step is O(depth + entries of the instances it touches); unrelated instances are never visited.
public final class ChainRunner {
    public let requester: Requester
    private let registry: RouteRegistry
    private let allocator: IDAllocator
    private let steps: [NavigationStep]
    private let links: [Int: DeepLinkContext]
    private let dismissReason: CoordinatorDismissedNotification.Reason
    private let baseTree: NavigationTree

    private var tree: NavigationTree
    private var cursor: InstanceID
    private var stepIndex = 0
    private var pendingLanding: InstanceID?
    private var effects: [ChainEffect] = []
    private var touched = Set<InstanceID>()
    private var created: [(instance: InstanceID, plugin: String, type: String)] = []
    private var removed = Set<InstanceID>()
    private var creations: [CreateQuestion] = []
    private var creationHead = 0
    private var waiting: Waiting?
    private var failure: ResponseError?

    private enum Waiting {
        case route(RouteQuestion, RouteDeclaration, Purpose)
        case create(CreateQuestion)
    }

    private enum Purpose {
        case push
        case setRoot(keepStack: Bool)
    }

    public init(
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
    public static func creatingRoot(
        tree: NavigationTree, registry: RouteRegistry, allocator: IDAllocator, root: RouteRegistry.TypeKey, params: JSONValue? = nil
    ) -> ChainRunner {
        let runner = ChainRunner(tree: tree, registry: registry, allocator: allocator, start: InstanceID(0), steps: [])
        runner.createRoot(root, params: params)
        return runner
    }

    // MARK: - Driving

    public func advance() -> ChainOutcome {
        if let failure { return .failed(ChainFailure(error: failure, created: created)) }
        if let waiting {
            switch waiting {
            case .route(let question, _, _): return .needs(.route(question))
            case .create(let question): return .needs(.create(question))
            }
        }
        while true {
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
                return .done(
                    ChainResult(
                        tree: tree, landedOn: cursor, changed: tree != baseTree, effects: effects, touched: touched,
                        created: created.map(\.instance), removed: removed))
            }
            do throws(ResponseError) {
                if let question = try execute(steps[stepIndex], index: stepIndex) {
                    return .needs(question)
                }
            } catch {
                failure = error
                return .failed(ChainFailure(error: error, created: created))
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
                try applyRouteAnswer(try result.get(), question: question, declaration: declaration, purpose: purpose)
            case (.create(let question), .create(let result)):
                try applyCreateAnswer(try result.get(), question: question)
            default:
                throw ResponseError(.internalError, "chain answered with the wrong kind of answer")
            }
        } catch {
            failure = error
        }
    }

    // MARK: - Steps

    private func instance(_ id: InstanceID) throws(ResponseError) -> Instance {
        guard let instance = tree[id] else { throw .instanceNotFound(id) }
        touched.insert(id)
        return instance
    }

    private func declaration(_ instance: Instance) throws(ResponseError) -> CoordinatorDeclaration {
        guard let declaration = registry.declaration(of: instance) else {
            throw ResponseError.pluginUnavailable(instance.plugin, "its route table is not available")
        }
        return declaration
    }

    private func requireKind(_ instance: Instance, _ kinds: CoordinatorKind..., operation: String) throws(ResponseError) {
        guard kinds.contains(instance.kind) else {
            throw .notAllowed(instance, "\(operation) works on \(kinds.map(\.rawValue).joined(separator: " or ")) coordinators, not on \(instance.kind.rawValue)")
        }
    }

    /// Plugins may change their own instances; on others they may only take routes the owner decides, on an
    /// ancestor of one of their own instances.
    private func authorize(_ instance: Instance, _ operation: String, ancestorMayRequest: Bool = false) throws(ResponseError) {
        guard case .plugin(let plugin) = requester, instance.plugin != plugin else { return }
        if ancestorMayRequest && isAncestorOfOwned(instance.id, by: plugin) { return }
        throw .notOwner(plugin, instance, operation)
    }

    private func isAncestorOfOwned(_ id: InstanceID, by plugin: String) -> Bool {
        tree.instances(of: plugin).contains { tree.ancestors(of: $0.id).contains(id) }
    }

    private func execute(_ step: NavigationStep, index: Int) throws(ResponseError) -> ChainNeed? {
        let current = try instance(cursor)
        func name(_ value: String?, _ field: String) throws(ResponseError) -> String {
            guard let value, !value.isEmpty else {
                throw ResponseError(.invalidParams, "step \(index) (\(step.op.rawValue)) needs '\(field)'", data: ["field": .string("steps[\(index)].\(field)")])
            }
            return value
        }
        switch step.op {
        case .route:
            try requireKind(current, .stack, operation: "route")
            let route = try name(step.route, "route")
            let declaration = try routeDeclaration(current, route)
            guard declaration.transition.isStackEntry else {
                throw .notAllowed(current, "route '\(route)' is a \(declaration.transition.rawValue) route, not one to push or present\(declaration.transition == .root ? " (use setRoot)" : "")", route: route)
            }
            try authorize(current, "route", ancestorMayRequest: true)
            try validate(step.params, declaration, current)
            return ask(current, declaration, params: step.params, index: index, purpose: .push)

        case .setRoot:
            try requireKind(current, .stack, operation: "setRoot")
            let route = try name(step.route, "route")
            let declaration = try routeDeclaration(current, route)
            guard declaration.transition == .root else {
                throw .notAllowed(current, "route '\(route)' is not a root route", route: route)
            }
            try authorize(current, "setRoot", ancestorMayRequest: true)
            try validate(step.params, declaration, current)
            if let root = current.root, root.route == route, sameParams(root.params, step.params) {
                // Already the root with these params: nothing changes (Stinsen's root() contract).
                land(root.content.coordinator ?? current.id)
                return nil
            }
            return ask(current, declaration, params: step.params, index: index, purpose: .setRoot(keepStack: step.keepStack ?? false))

        case .hasRoot:
            try requireKind(current, .stack, operation: "hasRoot")
            let route = try name(step.route, "route")
            guard let root = current.root, root.route == route, step.params == nil || sameParams(root.params, step.params) else {
                throw .routeNotFound(current, route, "the root is '\(current.root?.route ?? "none")'")
            }
            land(root.content.coordinator ?? current.id)

        case .focusFirst:
            let route = try name(step.route, "route")
            switch current.kind {
            case .stack:
                guard let position = current.entries.firstIndex(where: { $0.route == route && (step.params == nil || sameParams($0.params, step.params)) }) else {
                    throw .routeNotFound(current, route, "no entry of it in the stack")
                }
                try authorize(current, "focusFirst")
                let target = current.entries[position].content.coordinator ?? current.id
                try removeEntries(of: current.id, from: position + 1)
                land(target)
            case .tabs:
                try selectTab(current, route)
            case .wrapper:
                throw .notAllowed(current, "focusFirst works on stack and tabs coordinators", route: route)
            }

        case .selectTab:
            try requireKind(current, .tabs, operation: "selectTab")
            try selectTab(current, try name(step.tab ?? step.route, "tab"))

        case .popLast:
            try requireKind(current, .stack, operation: "popLast")
            try authorize(current, "popLast")
            guard !current.entries.isEmpty else { throw .notAllowed(current, "nothing to pop: the stack is at its root") }
            try removeEntries(of: current.id, from: current.entries.count - 1)
            land(current.id)

        case .pop:
            try requireKind(current, .stack, operation: "pop")
            try authorize(current, "pop")
            guard let entry = step.entry else { _ = try name(nil, "entry"); return nil }
            if current.root?.id == entry { throw .notAllowed(current, "the root entry cannot be popped (use setRoot or dismissCoordinator)") }
            guard let position = current.entries.firstIndex(where: { $0.id == entry }) else { throw .entryNotFound(current, entry) }
            try removeEntries(of: current.id, from: position)
            land(current.id)

        case .popTo:
            try requireKind(current, .stack, operation: "popTo")
            try authorize(current, "popTo")
            guard let target = step.index else { _ = try name(nil, "index"); return nil }
            guard target >= -1 && target < current.entries.count else {
                throw .notAllowed(current, "popTo index \(target) is out of range (-1 ... \(current.entries.count - 1))")
            }
            try removeEntries(of: current.id, from: target + 1)
            land(current.id)

        case .popCount:
            try requireKind(current, .stack, operation: "popCount")
            try authorize(current, "popCount")
            guard let count = step.count else { _ = try name(nil, "count"); return nil }
            guard count >= 1 && count <= current.entries.count else {
                throw .notAllowed(current, "cannot pop \(count) entries: the stack holds \(current.entries.count) above its root")
            }
            try removeEntries(of: current.id, from: current.entries.count - count)
            land(current.id)

        case .popToRoot:
            try requireKind(current, .stack, operation: "popToRoot")
            try authorize(current, "popToRoot")
            try removeEntries(of: current.id, from: 0)
            land(current.id)

        case .popToInitialRoute:
            try requireKind(current, .stack, operation: "popToInitialRoute")
            try authorize(current, "popToInitialRoute")
            try removeEntries(of: current.id, from: 0)
            // Whatever sits above this coordinator in the stacks it was pushed onto goes too, up to a tab boundary.
            var node = current
            while let link = node.parent {
                let parent = try instance(link.instance)
                if parent.kind == .tabs { break }
                if parent.kind == .stack, let position = parent.entries.firstIndex(where: { $0.id == link.entry }) {
                    try authorize(parent, "popToInitialRoute")
                    try removeEntries(of: parent.id, from: position + 1)
                } else if parent.kind == .stack {
                    // This coordinator is the parent's root: everything the parent shows above it goes.
                    try authorize(parent, "popToInitialRoute")
                    try removeEntries(of: parent.id, from: 0)
                }
                node = try instance(parent.id)
            }
            land(current.id)

        case .dismiss:
            try requireKind(current, .stack, operation: "dismiss")
            try authorize(current, "dismiss")
            guard let position = current.entries.lastIndex(where: { $0.transition.isModal }) else {
                throw .notAllowed(current, "no modal to dismiss")
            }
            try removeEntries(of: current.id, from: position)
            land(current.id)

        case .close:
            try requireKind(current, .stack, operation: "close")
            try authorize(current, "close")
            if let position = current.entries.lastIndex(where: { $0.transition.isModal }) {
                try removeEntries(of: current.id, from: position)
            } else if !current.entries.isEmpty {
                try removeEntries(of: current.id, from: current.entries.count - 1)
            } else {
                throw .notAllowed(current, "nothing to close: no modal and no pushed entry")
            }
            land(current.id)

        case .dismissCoordinator:
            try authorize(current, "dismissCoordinator")
            land(try dismiss(current, finishingFlow: false))

        case .finishFlow:
            try authorize(current, "finishFlow")
            land(try dismiss(current, finishingFlow: true))

        case .restart:
            try authorize(current, "restart")
            for entry in current.allEntries {
                if let child = entry.content.coordinator { destroySubtree(child) }
            }
            var reset = current
            reset.root = nil
            reset.entries = []
            reset.tabs = []
            reset.selectedTab = 0
            reset.child = nil
            tree.put(reset)
            let parent = current.parent.flatMap { link -> CoordinatorCreateRequest.Parent? in
                guard let owner = tree[link.instance], let entry = owner.entry(link.entry) else { return nil }
                return CoordinatorCreateRequest.Parent(instance: owner.id, plugin: owner.plugin, route: entry.route)
            }
            creations.append(
                CreateQuestion(
                    instance: current.id, plugin: current.plugin, type: current.type, reason: .restart,
                    params: current.params, parent: parent, state: current.state))
            pendingLanding = current.id

        case .child:
            let entry: Entry? =
                switch current.kind {
                case .wrapper: current.child
                case .tabs: current.selectedTabEntry
                case .stack: current.root
                }
            guard let child = entry?.content.coordinator else {
                throw .notAllowed(current, "its \(current.kind == .tabs ? "selected tab" : current.kind == .stack ? "root" : "child") shows a screen, not a coordinator")
            }
            land(child)

        case .parent:
            guard let parent = current.parent?.instance else { throw .notAllowed(current, "the tree's root has no parent") }
            land(parent)

        case .top:
            land(tree.topCoordinator(from: current.id))
        }
        return nil
    }

    private func land(_ id: InstanceID) {
        cursor = id
        stepIndex += 1
    }

    private func routeDeclaration(_ instance: Instance, _ route: String) throws(ResponseError) -> RouteDeclaration {
        guard let declaration = try declaration(instance).route(named: route) else {
            throw .routeNotFound(instance, route)
        }
        return declaration
    }

    private func selectTab(_ current: Instance, _ tab: String) throws(ResponseError) {
        guard let position = current.tabs.firstIndex(where: { $0.route == tab }) else {
            throw .routeNotFound(current, tab, "no such tab (tabs: \(current.tabs.map(\.route).joined(separator: ", ")))")
        }
        try authorize(current, "selectTab", ancestorMayRequest: true)
        let isRepeat = current.selectedTab == position
        if !isRepeat {
            var updated = current
            updated.selectedTab = position
            tree.put(updated)
        }
        effects.append(.tabSelected(instance: current.id, plugin: current.plugin, tab: tab, isRepeat: isRepeat))
        land(current.tabs[position].content.coordinator ?? current.id)
    }

    private func ask(_ instance: Instance, _ declaration: RouteDeclaration, params: JSONValue?, index: Int, purpose: Purpose) -> ChainNeed {
        let question = RouteQuestion(
            instance: instance.id, plugin: instance.plugin, type: instance.type, route: declaration.name,
            transition: declaration.transition, params: params, link: links[index])
        waiting = .route(question, declaration, purpose)
        return .route(question)
    }

    /// Removes an instance from its parent: the entry holding it and everything above it in a stack. A wrapper is
    /// removed with its child; a tab cannot be dismissed, but finishing its flow finishes the whole tabs coordinator.
    private func dismiss(_ current: Instance, finishingFlow: Bool) throws(ResponseError) -> InstanceID {
        guard let link = current.parent else { throw .notAllowed(current, "the tree's root cannot be dismissed") }
        let parent = try instance(link.instance)
        switch parent.kind {
        case .stack:
            guard let position = parent.entries.firstIndex(where: { $0.id == link.entry }) else {
                throw .notAllowed(current, "it is the root of \(ResponseError.describe(parent)); set another root there instead")
            }
            try removeEntries(of: parent.id, from: position)
            return parent.id
        case .wrapper:
            return try dismiss(parent, finishingFlow: finishingFlow)
        case .tabs:
            guard finishingFlow else {
                throw .notAllowed(current, "it is a tab of \(ResponseError.describe(parent)); tabs cannot be dismissed (finishFlow ends the whole tabs coordinator)")
            }
            return try dismiss(parent, finishingFlow: true)
        }
    }

    /// Removes `entries[from...]` of a stack instance, top first: owners are told, child subtrees destroyed.
    private func removeEntries(of id: InstanceID, from position: Int) throws(ResponseError) {
        var owner = try instance(id)
        guard position < owner.entries.count else { return }
        for entry in owner.entries[position...].reversed() {
            effects.append(.dismissed(instance: owner.id, plugin: owner.plugin, entry: entry.id, route: entry.route, reason: dismissReason))
            if let child = entry.content.coordinator { destroySubtree(child) }
        }
        owner.entries.removeSubrange(position...)
        tree.put(owner)
    }

    private func destroySubtree(_ id: InstanceID) {
        let doomed = tree.subtree(of: id)
        for node in doomed {
            guard let instance = tree[node] else { continue }
            effects.append(.destroy(instance: node, plugin: instance.plugin, type: instance.type))
            tree.remove(node)
            removed.insert(node)
            touched.insert(node)
        }
    }

    // MARK: - Answers

    private func applyRouteAnswer(
        _ answer: CoordinatorRouteRequest.Result, question: RouteQuestion, declaration: RouteDeclaration, purpose: Purpose
    ) throws(ResponseError) {
        var owner = try instance(question.instance)
        let entryID = allocator.entry()
        let content = try materialize(answer.content, route: declaration, owner: owner, entry: entryID, params: question.params)
        owner = tree[owner.id] ?? owner
        if let state = answer.state { owner.state = state }
        let entry = Entry(id: entryID, route: declaration.name, transition: declaration.transition, params: question.params, content: content)
        switch purpose {
        case .push:
            owner.entries.append(entry)
            tree.put(owner)
        case .setRoot(let keepStack):
            tree.put(owner)
            if let previous = owner.root?.content.coordinator { destroySubtree(previous) }
            if !keepStack { try removeEntries(of: owner.id, from: 0) }
            var updated = try instance(owner.id)
            updated.root = entry
            tree.put(updated)
        }
        pendingLanding = content.coordinator ?? owner.id
    }

    private func applyCreateAnswer(_ answer: CoordinatorCreateRequest.Result, question: CreateQuestion) throws(ResponseError) {
        var created = try instance(question.instance)
        let declaration = try declaration(created)
        func route(_ name: String, _ transition: Transition) throws(ResponseError) -> RouteDeclaration {
            guard let route = declaration.route(named: name), route.transition == transition else {
                throw .invalidAnswer(created.plugin, "'\(name)' is not a \(transition.rawValue) route of \(created.type)", instance: created, route: name)
            }
            return route
        }
        switch created.kind {
        case .stack:
            guard let root = answer.root else {
                throw .invalidAnswer(created.plugin, "the created stack \(created.type) needs 'root'", instance: created)
            }
            let declared = try route(root.route, .root)
            try validate(root.params, declared, created)
            let entryID = allocator.entry()
            let content = try materialize(root.content, route: declared, owner: created, entry: entryID, params: root.params)
            created = tree[created.id] ?? created
            created.root = Entry(id: entryID, route: declared.name, transition: .root, params: root.params, content: content)
        case .tabs:
            let declaredTabs = declaration.routes.filter { $0.transition == .tab }
            guard let tabs = answer.tabs, tabs.map(\.route) == declaredTabs.map(\.name) else {
                throw .invalidAnswer(
                    created.plugin, "the created tabs \(created.type) must give every declared tab in order: \(declaredTabs.map(\.name))",
                    instance: created)
            }
            var entries: [Entry] = []
            for (tab, declared) in zip(tabs, declaredTabs) {
                let entryID = allocator.entry()
                let content = try materialize(tab.content, route: declared, owner: created, entry: entryID, params: nil)
                entries.append(Entry(id: entryID, route: declared.name, transition: .tab, params: nil, content: content))
            }
            created = tree[created.id] ?? created
            created.tabs = entries
            let selected = answer.selectedTab ?? declaration.initialRoute ?? entries.first?.route
            created.selectedTab = entries.firstIndex { $0.route == selected } ?? 0
        case .wrapper:
            guard let child = answer.child, let declared = declaration.routes.first(where: { $0.transition == .child }) else {
                throw .invalidAnswer(created.plugin, "the created wrapper \(created.type) needs 'child'", instance: created)
            }
            let entryID = allocator.entry()
            let content = try materialize(child, route: declared, owner: created, entry: entryID, params: nil)
            created = tree[created.id] ?? created
            created.child = Entry(id: entryID, route: declared.name, transition: .child, params: nil, content: content)
        }
        if let state = answer.state { created.state = state }
        tree.put(created)
    }

    /// Turns a plugin's content into tree content, checking it against the route's declaration; a coordinator is
    /// created (as a placeholder now, filled in when its plugin answers `coordinator/create`).
    private func materialize(_ content: RouteContent, route: RouteDeclaration, owner: Instance, entry: EntryID, params: JSONValue?) throws(ResponseError) -> Content {
        switch content {
        case .screen(let screen):
            if let target = RouteRegistry.target(of: route, declaredBy: owner.plugin) {
                throw .invalidAnswer(owner.plugin, "route '\(route.name)' opens \(target), but the answer is a screen", instance: owner, route: route.name)
            }
            return .screen(screen)
        case .coordinator(let reference, let createParams):
            guard let target = RouteRegistry.target(of: route, declaredBy: owner.plugin) else {
                throw .invalidAnswer(owner.plugin, "route '\(route.name)' declares no target, so it must show a screen", instance: owner, route: route.name)
            }
            let answered = RouteRegistry.TypeKey(plugin: reference.plugin ?? owner.plugin, type: reference.type)
            guard answered == target else {
                throw .invalidAnswer(owner.plugin, "route '\(route.name)' opens \(target), but the answer is \(answered)", instance: owner, route: route.name)
            }
            guard let declaration = registry.declaration(plugin: target.plugin, type: target.type) else {
                throw ResponseError.pluginUnavailable(target.plugin, "it does not serve \(target.type) (excluded, missing or failed)")
            }
            let id = allocator.instance()
            let child = Instance(
                id: id, plugin: target.plugin, type: target.type, kind: declaration.kind,
                parent: InstanceSnapshot.ParentLink(instance: owner.id, entry: entry), params: createParams,
                version: tree.revision)
            tree.put(child)
            touched.insert(id)
            created.append((id, target.plugin, target.type))
            creations.append(
                CreateQuestion(
                    instance: id, plugin: target.plugin, type: target.type, reason: .new, params: createParams,
                    parent: CoordinatorCreateRequest.Parent(instance: owner.id, plugin: owner.plugin, route: route.name),
                    state: nil))
            return .coordinator(id)
        }
    }

    private func createRoot(_ root: RouteRegistry.TypeKey, params: JSONValue?) {
        guard let declaration = registry.declaration(plugin: root.plugin, type: root.type) else {
            failure = .pluginUnavailable(root.plugin, "it does not serve the root type \(root.type)")
            return
        }
        let id = allocator.instance()
        tree.put(Instance(id: id, plugin: root.plugin, type: root.type, kind: declaration.kind, parent: nil, params: params, version: tree.revision))
        tree.setRoot(id)
        created.append((id, root.plugin, root.type))
        creations.append(CreateQuestion(instance: id, plugin: root.plugin, type: root.type, reason: .new, params: params, parent: nil, state: nil))
        cursor = id
    }

    // MARK: - Params

    private func validate(_ params: JSONValue?, _ route: RouteDeclaration, _ instance: Instance) throws(ResponseError) {
        if let reason = routeParamsProblem(params, route.params) {
            throw .invalidRouteParams(instance, route.name, reason)
        }
    }
}

/// Why `params` do not fit a route's declared parameters, or nil when they do (absent declarations accept anything).
func routeParamsProblem(_ params: JSONValue?, _ declared: [ParamDeclaration]?) -> String? {
    guard let declared else { return nil }
    let object: JSONObject
    switch params {
    case nil, .null?: object = JSONObject()
    case .object(let value)?: object = value
    case let other?: return "params must be an object with \(declared.map(\.name)), not a \(other.kindName)"
    }
    for parameter in declared {
        guard let value = object[parameter.name], value != .null else {
            if parameter.isRequired { return "missing required param '\(parameter.name)'" }
            continue
        }
        guard value.matches(parameter.type) else {
            return "param '\(parameter.name)' must be \(parameter.type.rawValue), found \(value.kindName)"
        }
    }
    for key in object.keys where !declared.contains(where: { $0.name == key }) {
        return "unknown param '\(key)' (declared: \(declared.map(\.name)))"
    }
    return nil
}

extension JSONValue {
    func matches(_ type: ParamType) -> Bool {
        switch (type, self) {
        case (.any, _): true
        case (.string, .string), (.boolean, .bool), (.object, .object), (.array, .array): true
        case (.integer, .int): true
        case (.integer, .double(let number)): number.rounded() == number
        case (.number, .int), (.number, .double): true
        default: false
        }
    }
}
