public import SwitchyardProtocol

/// The chain a deep link applies: steps from the tree's root, with the link context of each hop that consults a
/// plugin.
public struct DeepLinkPlan: Sendable, Equatable {
    public let start: InstanceID
    public let steps: [NavigationStep]
    public let links: [Int: DeepLinkContext]
    /// Only from a resolver that may defer: the link resolves once this holds (a root that is not active, a tab
    /// not shown yet), and must wait for it (§13.5); the steps are then only what it would take.
    public let until: DeferCondition?
}

/// A question for a plugin that resolves deep links into one of its types itself (`coordinator/deepLink`).
public struct DeepLinkQuestion: Sendable, Equatable {
    public let plugin: String
    public let request: CoordinatorDeepLinkRequest.Params
}

public enum DeepLinkOutcome: Sendable {
    case needs(DeepLinkQuestion)
    case resolved(DeepLinkPlan)
    case invalid(ResponseError)
}

/// Matches a deep link's segments through the composed tree, hop by hop (Coordinator's `remainingRoutes` cursor,
/// across plugins), without changing anything: the dry-run validity check.
///
/// At each hop the cursor sits on a coordinator: an existing instance, or the type a previous hop would create.
/// The remaining segments are matched against that type's route patterns (or, for `customDeepLinks` types, its
/// plugin decides). The matched route becomes a step: a tab is selected, a root is passed through when it is the
/// active root (whatever params the link gives it) or else set, a push or modal route is taken; a wrapper is passed
/// through. The link is valid only if every segment is consumed; otherwise the error names the first segment that
/// could not be matched.
///
/// A resolver that may defer (`deferrable`, for `open` with `defer`, §13.5) resolves exactly as above first. Only a
/// link that fails so is tried again through the other root routes of the existing stacks it passed, whose patterns
/// match at that point: a link that resolves through one of them waits until that root is active (it never sets it:
/// switching roots is the app's, §13.3). A tab the link names that a tabs coordinator does not show yet (§12.7) is
/// waited for the same way.
public final class DeepLinkResolver {
    private enum Position {
        case instance(InstanceID)
        case prospective(RouteRegistry.TypeKey)
        case screen(String)
    }

    /// Where the cursor is; copied whole at a choice point, so that trying another root restores it.
    private struct State {
        var position: Position
        var cursor = 0
        var steps: [NavigationStep] = []
        var links: [Int: DeepLinkContext] = [:]
        var hops = 0
        var until: DeferCondition?
    }

    /// Another way through an existing stack: one of its root routes that is not active, and what it matches.
    private struct Alternative {
        let state: State
        let stack: InstanceID
        let route: RouteDeclaration
        let key: RouteRegistry.TypeKey
        let consumed: Int
    }

    private let link: DeepLinkURL
    private let tree: NavigationTree
    private let registry: RouteRegistry
    private let deferrable: Bool
    private var state: State
    private var alternatives: [Alternative] = []
    /// The error of the first way tried: what an undeferrable link fails with.
    private var firstError: ResponseError?
    private var waiting: (type: CoordinatorDeclaration, key: RouteRegistry.TypeKey)?
    private var outcome: DeepLinkOutcome?
    private let start: InstanceID?

    public init(link: DeepLinkURL, tree: NavigationTree, registry: RouteRegistry, deferrable: Bool = false) {
        self.link = link
        self.tree = tree
        self.registry = registry
        self.deferrable = deferrable
        self.start = tree.rootID
        self.state = State(position: tree.rootID.map(Position.instance) ?? .screen("the empty tree"))
    }

    public func advance() -> DeepLinkOutcome {
        while true {
            if let outcome { return outcome }
            if let waiting {
                return .needs(question(for: waiting.type, key: waiting.key))
            }
            do throws(ResponseError) {
                if let result = try step() { return result }
            } catch {
                fail(error)
            }
        }
    }

    /// Matches one hop; returns what the caller must hear (a question, the plan), or nil to go on.
    private func step() throws(ResponseError) -> DeepLinkOutcome? {
        guard let start else {
            throw ResponseError(.instanceNotFound, "the tree is empty: no root to open \(link.url) from")
        }
        if state.cursor == link.segments.count {
            let plan = DeepLinkPlan(start: start, steps: state.steps, links: state.links, until: state.until)
            outcome = .resolved(plan)
            return .resolved(plan)
        }
        state.hops += 1
        if state.hops > 256 { throw invalid("too many hops without consuming the link (a pass-through cycle?)") }
        let (declaration, key) = try currentType()
        if declaration.customDeepLinks == true {
            waiting = (declaration, key)
            return .needs(question(for: declaration, key: key))
        }
        if let (route, consumed, captures) = bestMatch(key) {
            if deferrable { noteOtherRoots(of: key, besides: route) }
            try take(route, declaration: declaration, key: key, consumed: consumed, params: try params(captures, route))
        } else if declaration.kind == .wrapper, let child = declaration.routes.first(where: { $0.transition == .child })
        {
            try take(child, declaration: declaration, key: key, consumed: 0, params: nil)
        } else {
            if deferrable { noteOtherRoots(of: key, besides: nil) }
            throw invalid("no route of \(key) matches (patterns: \(patterns(declaration)))")
        }
        return nil
    }

    /// The plugin's answer to the last `coordinator/deepLink` question.
    public func resume(with answer: Result<CoordinatorDeepLinkRequest.Result, ResponseError>) {
        guard let (declaration, key) = waiting else { return }
        waiting = nil
        do throws(ResponseError) {
            let decision = try answer.get()
            guard let route = declaration.route(named: decision.route) else {
                throw ResponseError.invalidAnswer(
                    key.plugin, "deep link answered with unknown route '\(decision.route)' of \(key.type)")
            }
            let remaining = link.segments.count - state.cursor
            guard decision.consumed >= 0 && decision.consumed <= remaining else {
                throw ResponseError.invalidAnswer(
                    key.plugin, "deep link answer consumed \(decision.consumed) of \(remaining) segments")
            }
            try take(route, declaration: declaration, key: key, consumed: decision.consumed, params: decision.params)
        } catch {
            fail(error.code == .deepLinkInvalid && error.data?["url"] == nil ? invalid(error.message) : error)
        }
    }

    /// The way being tried failed: the next root that is not active, if any is left to try; else the link is
    /// invalid, with the error of the first way (the one a link that may not defer fails with).
    private func fail(_ error: ResponseError) {
        if firstError == nil { firstError = error }
        guard error.code == .deepLinkInvalid, let alternative = alternatives.popLast() else {
            outcome = .invalid(firstError ?? error)
            return
        }
        // The link waits for this root: it passes through it as through an active one, and never sets it.
        state = alternative.state
        state.until = DeferCondition(.root, alternative.route.name, instance: alternative.stack)
        state.steps.append(.hasRoot(alternative.route.name))
        let target = RouteRegistry.target(of: alternative.route, declaredBy: alternative.key.plugin)
        state.position = target.map(Position.prospective) ?? .screen(alternative.route.name)
        state.cursor += alternative.consumed
    }

    /// At an existing stack, the root routes other than the one taken (and not active) whose patterns match here:
    /// the ways a link that fails may still wait for. Tried in the order of the patterns' specificity.
    private func noteOtherRoots(of key: RouteRegistry.TypeKey, besides taken: RouteDeclaration?) {
        guard state.until == nil, case .instance(let id) = state.position, let stack = tree[id], stack.kind == .stack
        else { return }
        let others = registry.linkRoutes(of: key).filter { candidate in
            candidate.route.transition == .root && candidate.route.name != taken?.name
                && candidate.route.name != stack.root?.route
        }
        var found: [(Alternative, (Int, Int, Int))] = []
        for candidate in others {
            guard let (consumed, _) = candidate.pattern.match(link.segments[state.cursor...]) else { continue }
            found.append(
                (
                    Alternative(state: state, stack: id, route: candidate.route, key: key, consumed: consumed),
                    candidate.pattern.rank(consumed: consumed)
                ))
        }
        // Popped from the end: the most specific last.
        alternatives += found.sorted { $0.1 < $1.1 }.map(\.0)
    }

    private func question(for declaration: CoordinatorDeclaration, key: RouteRegistry.TypeKey) -> DeepLinkQuestion {
        let instance: InstanceID? = if case .instance(let id) = state.position { id } else { nil }
        return DeepLinkQuestion(
            plugin: key.plugin,
            request: CoordinatorDeepLinkRequest.Params(
                instance: instance, type: key.type, segments: Array(link.segments[state.cursor...]),
                query: link.query, dryRun: true))
    }

    private func invalid(_ reason: String) -> ResponseError {
        let segment = state.cursor < link.segments.count ? link.segments[state.cursor] : nil
        return .deepLinkInvalid(link.url, segment: segment, index: state.cursor, reason)
    }

    private func currentType() throws(ResponseError) -> (CoordinatorDeclaration, RouteRegistry.TypeKey) {
        switch state.position {
        case .screen(let name):
            throw invalid("'\(name)' shows a screen; nothing can follow it")
        case .instance(let id):
            guard let instance = tree[id] else { throw .instanceNotFound(id) }
            guard !instance.isPending else { throw .placeholder(instance) }
            let key = RouteRegistry.TypeKey(plugin: instance.plugin, type: instance.type)
            guard let declaration = registry.declaration(of: instance) else {
                throw .pluginUnavailable(instance.plugin, "its route table is not available")
            }
            return (declaration, key)
        case .prospective(let key):
            guard let declaration = registry.declaration(plugin: key.plugin, type: key.type) else {
                throw .pluginUnavailable(key.plugin, "it does not serve \(key.type)")
            }
            return (declaration, key)
        }
    }

    private func patterns(_ declaration: CoordinatorDeclaration) -> String {
        let list = declaration.routes.compactMap { route in
            route.deepLink.map { "\(route.name): \($0.isEmpty ? "\"\"" : $0)" }
        }
        return list.isEmpty ? "none" : list.joined(separator: ", ")
    }

    /// The most specific matching pattern; between equally specific root routes, the active root wins, so two
    /// pass-through roots (`""`) follow whichever flow the user is in (Stinsen's `hasRoot` check before a link).
    private func bestMatch(_ key: RouteRegistry.TypeKey) -> (RouteDeclaration, Int, [String: String])? {
        let activeRoot: String? = if case .instance(let id) = state.position { tree[id]?.root?.route } else { nil }
        var best: (route: RouteDeclaration, consumed: Int, captures: [String: String], rank: (Int, Int, Int, Int))?
        for candidate in registry.linkRoutes(of: key) {
            guard let (consumed, captures) = candidate.pattern.match(link.segments[state.cursor...]) else { continue }
            let specificity = candidate.pattern.rank(consumed: consumed)
            let rank = (specificity.0, specificity.1, specificity.2, candidate.route.name == activeRoot ? 1 : 0)
            if let current = best, current.rank >= rank { continue }
            best = (candidate.route, consumed, captures, rank)
        }
        return best.map { ($0.route, $0.consumed, $0.captures) }
    }

    /// Captured strings converted to the declared types; query items fill declared params the path did not.
    private func params(_ captures: [String: String], _ route: RouteDeclaration) throws(ResponseError) -> JSONValue? {
        var object = JSONObject()
        let declared = route.params ?? []
        for (name, text) in captures.sorted(by: { $0.key < $1.key }) {
            let type = declared.first { $0.name == name }?.type ?? .string
            guard let value = Self.convert(text, to: type) else {
                throw invalid("'\(text)' is not a valid \(type.rawValue) for param '\(name)' of route '\(route.name)'")
            }
            object[name] = value
        }
        for parameter in declared where object[parameter.name] == nil {
            if let text = link.query[parameter.name], let value = Self.convert(text, to: parameter.type) {
                object[parameter.name] = value
            }
        }
        return object.isEmpty ? nil : .object(object)
    }

    static func convert(_ text: String, to type: ParamType) -> JSONValue? {
        switch type {
        case .string, .any: .string(text)
        case .integer: Int64(text).map(JSONValue.int)
        case .number: Double(text).map(JSONValue.double)
        case .boolean: text == "true" ? .bool(true) : text == "false" ? .bool(false) : nil
        case .object, .array: (try? JSONParser.parse(text)).flatMap { value in value.matches(type) ? value : nil }
        }
    }

    private func take(
        _ route: RouteDeclaration, declaration: CoordinatorDeclaration, key: RouteRegistry.TypeKey, consumed: Int,
        params: JSONValue?
    ) throws(ResponseError) {
        func validate() throws(ResponseError) {
            if let reason = routeParamsProblem(params, route.params) {
                throw invalid("route '\(route.name)': \(reason)")
            }
        }
        let context = DeepLinkContext(url: link.url, segments: link.segments, index: state.cursor, query: link.query)
        let target = RouteRegistry.target(of: route, declaredBy: key.plugin)
        func next(from existing: Content?) -> Position {
            if let existing {
                switch existing {
                case .coordinator(let id): return .instance(id)
                case .screen(let screen): return .screen(screen.name)
                }
            }
            return target.map(Position.prospective) ?? .screen(route.name)
        }
        let existing: Instance? = if case .instance(let id) = state.position { tree[id] } else { nil }
        switch route.transition {
        case .tab:
            state.steps.append(.selectTab(route.name))
            let shown = existing?.tabs.first { $0.route == route.name }
            if deferrable, let existing, shown == nil, state.until == nil {
                // A tab its owner has not added yet (§12.7): the link waits for it.
                state.until = DeferCondition(.tab, route.name, instance: existing.id)
            }
            state.position = next(from: shown?.content)
        case .root:
            if let root = existing?.root, root.route == route.name {
                // The active root: pass through it. The link's params for it are neither compared nor applied, so a
                // link (untrusted input: `?user=…`) never replaces the active root; switching roots is the app's own
                // navigation (setRoot). Stinsen's README checks `hasRoot(\.authenticated)` before a link the same way.
                state.steps.append(.hasRoot(route.name))
                state.position = next(from: root.content)
            } else {
                try validate()
                state.links[state.steps.count] = context
                state.steps.append(.setRoot(route.name, params))
                state.position = next(from: nil)
            }
        case .push, .modal, .fullScreen:
            try validate()
            state.links[state.steps.count] = context
            state.steps.append(.route(route.name, params))
            state.position = next(from: nil)
        case .child:
            state.steps.append(.child)
            state.position = next(from: existing?.child?.content)
        }
        state.cursor += consumed
    }
}
