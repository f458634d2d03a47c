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

    /// Whole deep links of the app, for examples (the prompt's banner): down the route patterns from the root's
    /// type as ``deepLinks(_:)`` goes, a capture filled with `1` and a wildcard with `x`; shortest first, at most
    /// `limit`, each saying whether it passes a value. The caller validates them against the running host.
    func exampleLinks(limit: Int = 20) -> [(link: String, passesValue: Bool)] {
        guard let root = snapshot.root.flatMap(snapshot.instance) else { return [] }
        var links: [(link: String, passesValue: Bool)] = []
        var queue: [(key: RouteRegistry.TypeKey, path: [String], depth: Int, value: Bool)] = [
            (.init(plugin: root.plugin, type: root.type), [], 0, false)
        ]
        var visited: Set<String> = []
        while !queue.isEmpty, links.count < limit {
            let (key, path, depth, value) = queue.removeFirst()
            guard depth < 6, visited.insert("\(key)|\(path.joined(separator: "/"))").inserted,
                let declaration = registry.declaration(plugin: key.plugin, type: key.type)
            else { continue }
            for route in declaration.routes {
                guard
                    let pattern = route.deepLink
                        ?? (declaration.kind == .wrapper && route.transition == .child ? "" : nil)
                else { continue }
                let pieces = pattern.split(separator: "/")
                let segments =
                    path
                    + pieces.map { segment in
                        segment.hasPrefix(":") ? "1" : segment.hasPrefix("*") ? "x" : String(segment)
                    }
                let passes = value || pieces.contains { $0.hasPrefix(":") || $0.hasPrefix("*") }
                if !segments.isEmpty { links.append((Self.scheme + segments.joined(separator: "/"), passes)) }
                if let target = RouteRegistry.target(of: route, declaredBy: key.plugin) {
                    queue.append((target, segments, depth + 1, passes))
                }
            }
        }
        return links
    }

    /// Deep links from the root's type down the route patterns, one path segment at a time (as a shell completes
    /// paths): a capture (`:id`) or a wildcard ends a link, since its value is the user's to type.
    private func deepLinks(_ word: String) -> [String] {
        guard let root = snapshot.root.flatMap(snapshot.instance) else { return [Self.scheme] }
        var links: Set<String> = []
        var queue: [(key: RouteRegistry.TypeKey, path: [String], depth: Int)] = [
            (.init(plugin: root.plugin, type: root.type), [], 0)
        ]
        var visited: Set<String> = []
        while !queue.isEmpty, links.count < 1_000 {
            let (key, path, depth) = queue.removeFirst()
            guard depth < 8, visited.insert("\(key)|\(path.joined(separator: "/"))").inserted,
                let declaration = registry.declaration(plugin: key.plugin, type: key.type)
            else { continue }
            for route in declaration.routes {
                let target = RouteRegistry.target(of: route, declaredBy: key.plugin)
                guard
                    let pattern = route.deepLink
                        ?? (declaration.kind == .wrapper && route.transition == .child ? "" : nil)
                else { continue }
                var segments = path
                var open = true
                for segment in pattern.split(separator: "/").map(String.init) {
                    if segment.hasPrefix(":") || segment.hasPrefix("*") {
                        open = false
                        break
                    }
                    segments.append(segment)
                }
                if !segments.isEmpty { links.insert(Self.scheme + segments.joined(separator: "/") + (open ? "" : "/")) }
                if open, let target { queue.append((target, segments, depth + 1)) }
            }
        }
        // Up to the next "/" past what is typed, so each Tab adds one segment.
        return links.map { link in
            guard link.hasPrefix(word), let slash = link.dropFirst(word.count).firstIndex(of: "/") else { return link }
            return String(link[...slash])
        }
    }
}
