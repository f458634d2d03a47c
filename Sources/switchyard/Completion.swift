import SwitchyardNavigation
import SwitchyardProtocol

/// Tab completion for the prompt, from the live tree and the composed route tables: commands, targets
/// (`@root`, `#ID`, `PLUGIN.TYPE`), step operations, route names of the target's type, and deep links.
struct Completer: Sendable {
    var snapshot: TreeSnapshot
    var registry: RouteRegistry

    static let commands = [
        "open", "validate", "nav", "dismissed", "action", "query", "tree", "status", "expect", "wait", "history",
        "help", "quit",
    ]
    /// Steps that name a route (or a tab) of the coordinator they apply to.
    static let routeSteps: Set = ["route", "setRoot", "hasRoot", "focusFirst", "selectTab"]
    static let scheme = "switchyard://"

    /// The completions of the word that ends `line` (the text before the cursor): where that word starts (in
    /// characters) and its candidates, sorted.
    func complete(_ line: String) -> (start: Int, candidates: [String]) {
        let characters = Array(line)
        var start = characters.count
        while start > 0, characters[start - 1] != " " { start -= 1 }
        let word = String(characters[start...])
        let previous = String(characters[..<start]).split(separator: " ").map(String.init)
        let options = candidates(after: previous, word: word)
        return (start, Set(options.filter { $0.hasPrefix(word) }).sorted())
    }

    private func candidates(after previous: [String], word: String) -> [String] {
        if word.contains(":") || (previous.count == 1 && ["open", "validate"].contains(previous[0])) {
            return deepLinks(word)
        }
        guard let command = previous.first else { return Self.commands + [Self.scheme] }
        let arguments = Array(previous.dropFirst())
        switch command {
        case "nav", "navigate":
            guard let target = arguments.first else { return targets }
            let steps = arguments.dropFirst().split(separator: ">", omittingEmptySubsequences: false).map(Array.init)
            let step = steps.last ?? []
            if step.isEmpty { return NavigationStep.Operation.allCases.map(\.rawValue) }
            if step.count == 1, Self.routeSteps.contains(step[0]) {
                // The first step applies to the target; later ones to wherever the chain got, so any route.
                return steps.count == 1 ? routes(of: target) : allRoutes
            }
            return [">"]
        case "dismissed", "action":
            if arguments.isEmpty { return targets }
            if arguments.count == 1 {
                return ["top"] + (instance(arguments[0])?.entries ?? []).map(\.entry.description)
            }
            if command == "action", arguments.count == 2 { return actions(of: arguments[0], entry: arguments[1]) }
            return []
        case "query":
            if arguments.isEmpty {
                return [
                    "isRoot", "hasRoot", "currentRoute", "isInStack", "topCoordinator", "canDismiss", "hasParent",
                    "presentedCount", "newest",
                ]
            }
            if arguments.count == 1 { return targets }
            return arguments.count == 2 ? routes(of: arguments[1]) : []
        case "tree":
            return arguments.isEmpty ? TreeRenderRequest.Format.allCases.map(\.rawValue) : []
        case "expect", "wait":
            let expectation =
                command == "wait" && arguments.first.map({ Int($0) != nil }) == true
                ? Array(arguments.dropFirst()) : arguments
            guard let what = expectation.first else {
                return ["root", "top", "tab", "stack", "revision", "instances"] + (command == "expect" ? ["error"] : [])
            }
            guard expectation.count == 1 else { return [] }
            switch what {
            case "root": return snapshot.root.map { routes(of: $0.description) } ?? []
            case "top": return types
            case "stack": return targets
            case "tab": return snapshot.instances.flatMap { $0.tabs ?? [] }.map(\.route)
            default: return []
            }
        default:
            return []
        }
    }

    // MARK: - From the tree

    private var targets: [String] {
        ["@root", "@top"] + types + snapshot.instances.map(\.id.description)
    }

    private var types: [String] { snapshot.instances.map { "\($0.plugin).\($0.type)" } }

    private func instance(_ target: String) -> InstanceSnapshot? {
        switch target {
        case "@root", "": return snapshot.root.flatMap(snapshot.instance)
        default:
            if target.hasPrefix("#"), let number = Int64(target.dropFirst()) {
                return snapshot.instance(InstanceID(number))
            }
            return snapshot.instances.first { "\($0.plugin).\($0.type)" == target }
        }
    }

    // MARK: - From the route tables

    /// The route names of the target's type (of every type when the target is not a live instance, e.g. `@top`).
    private func routes(of target: String) -> [String] {
        guard let instance = instance(target),
            let declaration = registry.declaration(plugin: instance.plugin, type: instance.type)
        else {
            return allRoutes
        }
        return declaration.routes.map(\.name)
    }

    /// The actions the route of that entry (`top` or an entry id) declares.
    private func actions(of target: String, entry: String) -> [String] {
        guard let shown = instance(target),
            let declaration = registry.declaration(plugin: shown.plugin, type: shown.type)
        else { return [] }
        let entries = [shown.root, shown.child].compactMap(\.self) + (shown.entries ?? []) + (shown.tabs ?? [])
        let picked =
            entry == "top"
            ? (shown.entries?.last ?? shown.root ?? shown.child)
            : entries.first { $0.entry.description == entry || "\($0.entry.rawValue)" == entry }
        return picked.flatMap { declaration.route(named: $0.route)?.actions?.map(\.name) } ?? []
    }

    private var allRoutes: [String] {
        registry.plugins.flatMap { registry.coordinators(of: $0) }.flatMap { $0.routes.map(\.name) }
    }

    /// Breadth-first down the route patterns from the root's type (a wrapper's child counts with an empty pattern),
    /// at most `maxDepth` hops, while `more()`: `visit` gets the path so far, the route's pattern split into
    /// segments and what the walk carries along that path, and returns the path and carry to go on with into the
    /// route's target, or nil to stop there.
    private func walkLinks<Carry>(
        maxDepth: Int, start: Carry, while more: () -> Bool,
        _ visit: (_ path: [String], _ pattern: [Substring], _ carry: Carry) -> (path: [String], carry: Carry)?
    ) {
        guard let root = snapshot.root.flatMap(snapshot.instance) else { return }
        var queue: [(key: RouteRegistry.TypeKey, path: [String], depth: Int, carry: Carry)] = [
            (.init(plugin: root.plugin, type: root.type), [], 0, start)
        ]
        var visited: Set<String> = []
        while !queue.isEmpty, more() {
            let (key, path, depth, carry) = queue.removeFirst()
            guard depth < maxDepth, visited.insert("\(key)|\(path.joined(separator: "/"))").inserted,
                let declaration = registry.declaration(plugin: key.plugin, type: key.type)
            else { continue }
            for route in declaration.routes {
                guard
                    let pattern = route.deepLink
                        ?? (declaration.kind == .wrapper && route.transition == .child ? "" : nil)
                else { continue }
                guard let next = visit(path, pattern.split(separator: "/"), carry),
                    let target = RouteRegistry.target(of: route, declaredBy: key.plugin)
                else { continue }
                queue.append((target, next.path, depth + 1, next.carry))
            }
        }
    }

    private static func isCapture(_ segment: Substring) -> Bool { segment.hasPrefix(":") || segment.hasPrefix("*") }

    /// Whole deep links of the app, for examples (the prompt's banner): a capture filled with `1` and a wildcard
    /// with `x`; shortest first, at most `limit`, each saying whether it passes a value. The caller validates them
    /// against the running host.
    func exampleLinks(limit: Int = 20) -> [(link: String, passesValue: Bool)] {
        var links: [(link: String, passesValue: Bool)] = []
        walkLinks(maxDepth: 6, start: false, while: { links.count < limit }) { path, pattern, passed in
            let segments = path + pattern.map { $0.hasPrefix(":") ? "1" : $0.hasPrefix("*") ? "x" : String($0) }
            let passes = passed || pattern.contains(where: Self.isCapture)
            if !segments.isEmpty { links.append((Self.scheme + segments.joined(separator: "/"), passes)) }
            return (segments, passes)
        }
        return links
    }

    /// Deep links from the root's type down the route patterns, one path segment at a time (as a shell completes
    /// paths): a capture (`:id`) or a wildcard ends a link, since its value is the user's to type.
    private func deepLinks(_ word: String) -> [String] {
        guard snapshot.root.flatMap(snapshot.instance) != nil else { return [Self.scheme] }
        var links: Set<String> = []
        walkLinks(maxDepth: 8, start: (), while: { links.count < 1_000 }) { path, pattern, _ in
            let literal = pattern.prefix { !Self.isCapture($0) }.map(String.init)
            let segments = path + literal
            let open = literal.count == pattern.count
            if !segments.isEmpty { links.insert(Self.scheme + segments.joined(separator: "/") + (open ? "" : "/")) }
            return open ? (segments, ()) : nil
        }
        // Up to the next "/" past what is typed, so each Tab adds one segment.
        return links.map { link in
            guard link.hasPrefix(word), let slash = link.dropFirst(word.count).firstIndex(of: "/") else { return link }
            return String(link[...slash])
        }
    }
}
