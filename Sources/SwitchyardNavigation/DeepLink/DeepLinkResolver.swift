public import SwitchyardProtocol

/// The chain a deep link applies: steps from the tree's root, with the link context of each hop that consults a
/// plugin.
public struct DeepLinkPlan: Sendable, Equatable {
    public let start: InstanceID
    public let steps: [NavigationStep]
    public let links: [Int: DeepLinkContext]
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
public final class DeepLinkResolver {
    private enum Position {
        case instance(InstanceID)
        case prospective(RouteRegistry.TypeKey)
        case screen(String)
    }

    private let link: DeepLinkURL
    private let tree: NavigationTree
    private let registry: RouteRegistry
    private var position: Position
    private var cursor = 0
    private var steps: [NavigationStep] = []
    private var links: [Int: DeepLinkContext] = [:]
    private var hops = 0
    private var waiting: (type: CoordinatorDeclaration, key: RouteRegistry.TypeKey)?
    private var outcome: DeepLinkOutcome?
    private let start: InstanceID?

    public init(link: DeepLinkURL, tree: NavigationTree, registry: RouteRegistry) {
        self.link = link
        self.tree = tree
        self.registry = registry
        self.start = tree.rootID
        self.position = tree.rootID.map(Position.instance) ?? .screen("the empty tree")
    }

    public func advance() -> DeepLinkOutcome {
        if let outcome { return outcome }
        if let waiting {
            return .needs(question(for: waiting.type, key: waiting.key))
        }
        do throws(ResponseError) {
            while true {
                guard let start else {
                    throw ResponseError(.instanceNotFound, "the tree is empty: no root to open \(link.url) from")
                }
                if cursor == link.segments.count {
                    let plan = DeepLinkPlan(start: start, steps: steps, links: links)
                    outcome = .resolved(plan)
                    return .resolved(plan)
                }
                hops += 1
                if hops > 256 { throw invalid("too many hops without consuming the link (a pass-through cycle?)") }
                let (declaration, key) = try currentType()
                if declaration.customDeepLinks == true {
                    waiting = (declaration, key)
                    return .needs(question(for: declaration, key: key))
                }
                if let (route, consumed, captures) = bestMatch(key) {
                    try take(
                        route, declaration: declaration, key: key, consumed: consumed,
                        params: try params(captures, route))
                } else if declaration.kind == .wrapper,
                    let child = declaration.routes.first(where: { $0.transition == .child })
                {
                    try take(child, declaration: declaration, key: key, consumed: 0, params: nil)
                } else {
                    throw invalid("no route of \(key) matches (patterns: \(patterns(declaration)))")
                }
            }
        } catch {
            outcome = .invalid(error)
            return .invalid(error)
        }
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
            let remaining = link.segments.count - cursor
            guard decision.consumed >= 0 && decision.consumed <= remaining else {
                throw ResponseError.invalidAnswer(
                    key.plugin, "deep link answer consumed \(decision.consumed) of \(remaining) segments")
            }
            try take(route, declaration: declaration, key: key, consumed: decision.consumed, params: decision.params)
        } catch {
            if error.code == .deepLinkInvalid && error.data?["url"] == nil {
                outcome = .invalid(invalid(error.message))
            } else {
                outcome = .invalid(error)
            }
        }
    }

    private func question(for declaration: CoordinatorDeclaration, key: RouteRegistry.TypeKey) -> DeepLinkQuestion {
        let instance: InstanceID? = if case .instance(let id) = position { id } else { nil }
        return DeepLinkQuestion(
            plugin: key.plugin,
            request: CoordinatorDeepLinkRequest.Params(
                instance: instance, type: key.type, segments: Array(link.segments[cursor...]), query: link.query,
                dryRun: true))
    }

    private func invalid(_ reason: String) -> ResponseError {
        let segment = cursor < link.segments.count ? link.segments[cursor] : nil
        return .deepLinkInvalid(link.url, segment: segment, index: cursor, reason)
    }

    private func currentType() throws(ResponseError) -> (CoordinatorDeclaration, RouteRegistry.TypeKey) {
        switch position {
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
        let activeRoot: String? = if case .instance(let id) = position { tree[id]?.root?.route } else { nil }
        var best: (route: RouteDeclaration, consumed: Int, captures: [String: String], rank: (Int, Int, Int, Int))?
        for candidate in registry.linkRoutes(of: key) {
            guard let (consumed, captures) = candidate.pattern.match(link.segments[cursor...]) else { continue }
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
        let context = DeepLinkContext(url: link.url, segments: link.segments, index: cursor, query: link.query)
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
        let existing: Instance? = if case .instance(let id) = position { tree[id] } else { nil }
        switch route.transition {
        case .tab:
            steps.append(.selectTab(route.name))
            position = next(from: existing?.tabs.first { $0.route == route.name }?.content)
        case .root:
            if let root = existing?.root, root.route == route.name {
                // The active root: pass through it. The link's params for it are neither compared nor applied, so a
                // link (untrusted input: `?user=…`) never replaces the active root; switching roots is the app's own
                // navigation (setRoot). Stinsen's README checks `hasRoot(\.authenticated)` before a link the same way.
                steps.append(.hasRoot(route.name))
                position = next(from: root.content)
            } else {
                try validate()
                links[steps.count] = context
                steps.append(.setRoot(route.name, params))
                position = next(from: nil)
            }
        case .push, .modal, .fullScreen:
            try validate()
            links[steps.count] = context
            steps.append(.route(route.name, params))
            position = next(from: nil)
        case .child:
            steps.append(.child)
            position = next(from: existing?.child?.content)
        }
        cursor += consumed
    }
}
