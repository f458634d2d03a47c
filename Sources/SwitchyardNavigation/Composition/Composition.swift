public import SwitchyardProtocol

/// One problem found when composing the route tables, naming the plugin, the type, the route (and the param) and
/// the reason.
public struct CompositionIssue: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        /// The plugin's own table is broken: the app starts without the plugin (or refuses to start when strict).
        case error
        /// A route leads to a plugin that is absent or excluded: the route answers `pluginUnavailable`.
        case warning
    }

    /// What kind of problem it is, so a tool can tell a broken reference to another module from a broken table.
    public enum Category: String, Sendable {
        /// The plugin's own table breaks a rule of §5 and §14.
        case table
        /// A route targets a plugin the manifest does not name.
        case unknownPlugin
        /// A route targets a type its plugin does not declare.
        case unknownType
        /// A route presents a coordinator in a way its kind does not allow (a pushed tab bar).
        case kind
        /// A route creates a coordinator with params its type does not take (§14).
        case params
        /// A route leads to a plugin that is not running or was left out (a warning).
        case unavailable
        /// Deep links can pass through types in a cycle.
        case cycle
        /// The manifest's root cannot be used.
        case root
    }

    /// Whether it leaves the plugin out (or stops a strict app), or only makes a route unavailable.
    public let severity: Severity
    /// The plugin whose table it is about.
    public let plugin: String
    /// The type, when it is about one.
    public let type: String?
    /// The route, when it is about one.
    public let route: String?
    /// The param the problem is about, when it is about one.
    public let param: String?
    /// What kind of problem it is.
    public let category: Category
    /// Why, in words.
    public let reason: String

    /// An issue; `category` defaults to a broken table.
    public init(
        severity: Severity, plugin: String, type: String?, route: String?, param: String? = nil,
        category: Category = .table,
        reason: String
    ) {
        self.severity = severity
        self.plugin = plugin
        self.type = type
        self.route = route
        self.param = param
        self.category = category
        self.reason = reason
    }

    /// Whether the problem is about a route of one plugin that opens another plugin's type.
    public var isReference: Bool { category == .unknownType || category == .kind || category == .params }

    /// Where: `plugin 'todos', type 'todos', route 'project', param 'id'`.
    public var location: String {
        var location = "plugin '\(plugin)'"
        if let type { location += ", type '\(type)'" }
        if let route { location += ", route '\(route)'" }
        if let param { location += ", param '\(param)'" }
        return location
    }

    public var description: String { "\(severity.rawValue): \(location): \(reason)" }

    /// As a wire error (`-32017 compositionError`).
    public var error: ResponseError {
        var data: JSONObject = ["plugin": .string(plugin), "severity": .string(severity.rawValue)]
        if let type { data["type"] = .string(type) }
        if let route { data["route"] = .string(route) }
        if let param { data["param"] = .string(param) }
        return ResponseError(.compositionError, description, data: .object(data))
    }
}

/// The outcome of composing every plugin's route table.
public struct CompositionReport: Sendable {
    public let issues: [CompositionIssue]
    /// Plugins left out because their tables break the composition.
    public let excluded: [String]
    /// The composed tables of the plugins that remain.
    public let registry: RouteRegistry
    /// A problem that prevents the app from starting at all (no usable root).
    public let fatal: CompositionIssue?

    public init(issues: [CompositionIssue], excluded: [String], registry: RouteRegistry, fatal: CompositionIssue?) {
        self.issues = issues
        self.excluded = excluded
        self.registry = registry
        self.fatal = fatal
    }
}

/// Checks that the route tables of all plugins compose into one consistent app.
public enum Composition {
    /// - Parameters:
    ///   - tables: the route table of every plugin that completed its handshake, in manifest order.
    ///   - declaredPlugins: every plugin the manifest names (including those that failed to start).
    ///   - root: the coordinator the tree starts from.
    public static func check(
        tables: [(plugin: String, coordinators: [CoordinatorDeclaration])], declaredPlugins: [String],
        root: RouteRegistry.TypeKey?
    ) -> CompositionReport {
        var issues: [CompositionIssue] = []
        var excluded: [String] = []
        func exclude(_ plugin: String) { if !excluded.contains(plugin) { excluded.append(plugin) } }

        // 1. Each plugin's own table.
        for (plugin, coordinators) in tables {
            let found = structuralIssues(plugin: plugin, coordinators: coordinators)
            issues += found
            if !found.isEmpty { exclude(plugin) }
        }

        // 2. Routes that open another coordinator: the target must exist and fit the transition. Excluding a plugin
        // here can change nothing for the others (their routes into it become warnings), but run to a fixed point so
        // the outcome never depends on the order of the plugins. Every broken route of a plugin is reported, not only
        // the first: `contract check` shows a module's CI all it has to fix at once.
        var settled = false
        while !settled {
            settled = true
            for (plugin, coordinators) in tables where !excluded.contains(plugin) {
                for coordinator in coordinators {
                    for route in coordinator.routes {
                        guard let target = RouteRegistry.target(of: route, declaredBy: plugin),
                            !excluded.contains(target.plugin) || target.plugin == plugin
                        else { continue }
                        func error(_ category: CompositionIssue.Category, _ reason: String, param: String? = nil) {
                            issues.append(
                                CompositionIssue(
                                    severity: .error, plugin: plugin, type: coordinator.type, route: route.name,
                                    param: param,
                                    category: category, reason: reason))
                            exclude(plugin)
                            settled = false
                        }
                        guard declaredPlugins.contains(target.plugin) else {
                            error(.unknownPlugin, "targets plugin '\(target.plugin)', which the manifest does not name")
                            continue
                        }
                        // Not running: a warning below.
                        guard let table = tables.first(where: { $0.plugin == target.plugin }) else { continue }
                        guard let declaration = table.coordinators.first(where: { $0.type == target.type }) else {
                            error(
                                .unknownType,
                                "targets type '\(target.type)', which plugin '\(target.plugin)' does not declare")
                            continue
                        }
                        if route.allows(.push) && declaration.kind != .stack {
                            error(
                                .kind,
                                "pushes \(target), a \(declaration.kind.rawValue) coordinator; only stack coordinators can be pushed onto a navigation stack (present it modally instead)"
                            )
                        }
                        for mismatch in ParamCompatibility.mismatches(
                            passed: route.targetParams, accepted: declaration.params, target: target.description)
                        {
                            error(.params, mismatch.reason, param: mismatch.param)
                        }
                    }
                }
            }
        }
        // Routes into plugins that are not running or were excluded answer pluginUnavailable at run time.
        for (plugin, coordinators) in tables where !excluded.contains(plugin) {
            for coordinator in coordinators {
                for route in coordinator.routes {
                    guard let target = RouteRegistry.target(of: route, declaredBy: plugin), target.plugin != plugin
                    else { continue }
                    let state: String? =
                        excluded.contains(target.plugin)
                        ? "is excluded"
                        : !tables.contains(where: { $0.plugin == target.plugin }) ? "is not running" : nil
                    if let state {
                        issues.append(
                            CompositionIssue(
                                severity: .warning, plugin: plugin, type: coordinator.type, route: route.name,
                                category: .unavailable,
                                reason:
                                    "targets plugin '\(target.plugin)', which \(state); the route answers pluginUnavailable"
                            ))
                    }
                }
            }
        }

        // 3. Deep-link pass-through cycles ("" patterns and wrappers that lead back to where they started), and
        // types whose initial content opens, in the end, the type itself: creating one would never end.
        let composing = tables.filter { !excluded.contains($0.plugin) }
        let passThrough = passThroughCycles(composing)
        // A wrapper's child is both initial content and a pass-through: its cycle is reported once.
        let initial = initialContentCycles(composing).filter { cycle in
            !passThrough.contains { $0.plugin == cycle.plugin && $0.type == cycle.type && $0.route == cycle.route }
        }
        for cycle in passThrough + initial {
            issues.append(cycle)
            exclude(cycle.plugin)
        }
        var registry = RouteRegistry()
        for (plugin, coordinators) in tables where !excluded.contains(plugin) {
            registry.add(plugin: plugin, coordinators: coordinators)
        }

        // 4. The root.
        var fatal: CompositionIssue?
        if let root {
            if excluded.contains(root.plugin) || registry.declaration(plugin: root.plugin, type: root.type) == nil {
                let why =
                    excluded.contains(root.plugin)
                    ? "is excluded"
                    : tables.contains(where: { $0.plugin == root.plugin })
                        ? "does not declare type '\(root.type)'" : "is not running"
                let issue = CompositionIssue(
                    severity: .error, plugin: root.plugin, type: root.type, route: nil, category: .root,
                    reason: "the manifest's root \(root) cannot be used: the plugin \(why)")
                fatal = issue
                issues.append(issue)
            }
        }
        return CompositionReport(issues: issues, excluded: excluded, registry: registry, fatal: fatal)
    }

    /// Problems inside one plugin's table.
    static func structuralIssues(plugin: String, coordinators: [CoordinatorDeclaration]) -> [CompositionIssue] {
        var issues: [CompositionIssue] = []
        var types = Set<String>()
        for coordinator in coordinators {
            func issue(_ route: String?, _ reason: String) {
                issues.append(
                    CompositionIssue(
                        severity: .error, plugin: plugin, type: coordinator.type, route: route, reason: reason))
            }
            if !types.insert(coordinator.type).inserted { issue(nil, "the type is declared twice") }
            if let params = coordinator.params, Set(params.map(\.name)).count != params.count {
                issue(nil, "a parameter name of the type's params is used twice")
            }
            var names = Set<String>()
            var shapes: [String: String] = [:]
            var rootShapes = Set<String>()
            for route in coordinator.routes {
                if !names.insert(route.name).inserted { issue(route.name, "the route name is used twice") }
                if route.transition.ownerKind != coordinator.kind {
                    issue(
                        route.name,
                        "transition '\(route.transition.rawValue)' does not fit a \(coordinator.kind.rawValue) coordinator"
                    )
                }
                if let text = route.deepLink {
                    do {
                        let pattern = try PathPattern(parsing: text)
                        // Root routes may share a pattern with each other: only one is active, and the resolver
                        // follows the active one (e.g. signed-in and signed-out roots that both pass through "").
                        let isRoot = route.transition == .root
                        if let other = shapes[pattern.shape], !(isRoot && rootShapes.contains(pattern.shape)) {
                            issue(
                                route.name,
                                "deep-link pattern \(pattern) collides with route '\(other)' (both match the same paths)"
                            )
                        } else if shapes[pattern.shape] == nil {
                            shapes[pattern.shape] = route.name
                        }
                        if isRoot { rootShapes.insert(pattern.shape) }
                        // A capture becomes a param of the route: with declared params, it must be one of them, or
                        // every link that matches fails at run time (seen: `:id` on a factory that takes nothing).
                        if let declared = route.params {
                            for capture in pattern.captureNames where !declared.contains(where: { $0.name == capture })
                            {
                                let list =
                                    declared.isEmpty
                                    ? "declares no parameters"
                                    : "declares only \(declared.map { "'\($0.name)'" }.joined(separator: ", "))"
                                issue(
                                    route.name,
                                    "deep-link pattern \(pattern) captures '\(capture)', but the route \(list): declare a parameter '\(capture)' or drop the capture"
                                )
                            }
                        }
                    } catch {
                        issue(route.name, error.description)
                    }
                }
                if let declared = route.params {
                    let parameterNames = declared.map(\.name)
                    if Set(parameterNames).count != parameterNames.count {
                        issue(route.name, "a parameter name is used twice")
                    }
                }
                if let transitions = route.transitions, !transitions.isEmpty {
                    if !route.transition.isStackEntry || transitions.contains(where: { !$0.isStackEntry }) {
                        issue(
                            route.name,
                            "only push, modal and fullScreen routes may offer other transitions (push, modal, fullScreen)"
                        )
                    }
                }
                if let actions = route.actions, !actions.isEmpty {
                    for problem in actionProblems(route, actions) { issue(route.name, problem) }
                }
                if let item = route.tabItem {
                    for problem in tabItemProblems(route, item) { issue(route.name, problem) }
                }
                if let passed = route.targetParams {
                    if route.target == nil {
                        issue(route.name, "declares targetParams but opens no coordinator (no target)")
                    }
                    if Set(passed.map(\.name)).count != passed.count {
                        issue(route.name, "a targetParams name is used twice")
                    }
                }
            }
            switch coordinator.kind {
            case .stack:
                let roots = coordinator.routes.filter { $0.transition == .root }
                if roots.isEmpty { issue(nil, "a stack coordinator needs at least one root route") }
                if let initial = coordinator.initialRoute {
                    if !roots.contains(where: { $0.name == initial }) {
                        issue(initial, "initialRoute is not a root route")
                    }
                } else {
                    issue(nil, "a stack coordinator needs initialRoute (the root shown at creation)")
                }
            case .tabs:
                let tabs = coordinator.routes.filter { $0.transition == .tab }
                if tabs.isEmpty { issue(nil, "a tabs coordinator needs at least one tab route") }
                if let initial = coordinator.initialRoute, !tabs.contains(where: { $0.name == initial }) {
                    issue(initial, "initialRoute is not a tab")
                }
            case .wrapper:
                if coordinator.routes.filter({ $0.transition == .child }).count != 1 {
                    issue(nil, "a wrapper coordinator needs exactly one child route")
                }
            }
        }
        return issues
    }

    /// A route's declared actions (§12.6): only a screen emits them, each name once, each param name once per action.
    static func actionProblems(_ route: RouteDeclaration, _ actions: [ActionDeclaration]) -> [String] {
        var problems: [String] = []
        if route.target != nil {
            problems.append("a route that opens a coordinator declares actions; only a screen route emits them")
        }
        var names = Set<String>()
        for action in actions {
            if action.name.isEmpty { problems.append("an action has an empty name") }
            if !names.insert(action.name).inserted { problems.append("the action name '\(action.name)' is used twice") }
            if let params = action.params, Set(params.map(\.name)).count != params.count {
                problems.append("action '\(action.name)': a parameter name is used twice")
            }
        }
        return problems
    }

    /// A route's tab item (§21): only a tab has one, with a title, and a symbol of the documented set.
    static func tabItemProblems(_ route: RouteDeclaration, _ item: TabItem) -> [String] {
        var problems: [String] = []
        if route.transition != .tab { problems.append("declares a tabItem, but only a tab route has one") }
        if item.title.isEmpty { problems.append("its tabItem has an empty title") }
        if let symbol = item.symbol, !ScreenVocabulary.symbols.contains(symbol) {
            problems.append("its tabItem's symbol '\(symbol)' is not one of the documented symbols (§21)")
        }
        return problems
    }

    /// Types whose initial content (a stack's `initialRoute`, a wrapper's child, a tab bar's tabs) opens a coordinator
    /// whose own initial content leads back to the first: each creation would ask for the next, without end. Found
    /// here, before any instance exists, and named as the path that closes the loop (`a.main → b.main → a.main`).
    static func initialContentCycles(
        _ tables: [(plugin: String, coordinators: [CoordinatorDeclaration])]
    ) -> [CompositionIssue] {
        let edges = typeEdges(tables) { coordinator, route in
            switch coordinator.kind {
            case .stack: route.name == coordinator.initialRoute
            case .wrapper: route.transition == .child
            case .tabs: route.transition == .tab
            }
        }
        return cycles(in: edges) { node, route, path in
            CompositionIssue(
                severity: .error, plugin: node.plugin, type: node.type, route: route, category: .cycle,
                reason:
                    "initial content opens coordinators in a cycle (\(path.map(\.description).joined(separator: " → "))): creating one would never end; give one of them a screen as its initial content"
            )
        }
    }

    /// The graph of types whose routes `follows` selects: each type to the types those routes open, with the route.
    private static func typeEdges(
        _ tables: [(plugin: String, coordinators: [CoordinatorDeclaration])],
        following follows: (CoordinatorDeclaration, RouteDeclaration) -> Bool
    ) -> [RouteRegistry.TypeKey: [(RouteRegistry.TypeKey, String)]] {
        var edges: [RouteRegistry.TypeKey: [(RouteRegistry.TypeKey, String)]] = [:]
        for (plugin, coordinators) in tables {
            for coordinator in coordinators {
                let from = RouteRegistry.TypeKey(plugin: plugin, type: coordinator.type)
                for route in coordinator.routes where follows(coordinator, route) {
                    guard let target = RouteRegistry.target(of: route, declaredBy: plugin) else { continue }
                    edges[from, default: []].append((target, route.name))
                }
            }
        }
        return edges
    }

    /// Every cycle of `edges` found by one depth-first walk in a stable order, as the issue `report` makes of the
    /// edge that closes it (`path` runs from the cycle's first type back to it).
    private static func cycles(
        in edges: [RouteRegistry.TypeKey: [(RouteRegistry.TypeKey, String)]],
        report: (RouteRegistry.TypeKey, String, [RouteRegistry.TypeKey]) -> CompositionIssue
    ) -> [CompositionIssue] {
        var issues: [CompositionIssue] = []
        var state: [RouteRegistry.TypeKey: Int] = [:]  // 1 visiting, 2 done
        var stack: [RouteRegistry.TypeKey] = []
        func visit(_ node: RouteRegistry.TypeKey) {
            state[node] = 1
            stack.append(node)
            for (next, route) in edges[node] ?? [] {
                if state[next] == 1 {
                    let start = stack.lastIndex(of: next) ?? 0
                    issues.append(report(node, route, Array(stack[start...]) + [next]))
                } else if state[next] == nil {
                    visit(next)
                }
            }
            stack.removeLast()
            state[node] = 2
        }
        for node in edges.keys.sorted(by: { $0.description < $1.description }) where state[node] == nil { visit(node) }
        return issues
    }

    /// Types that deep links can pass through without consuming a segment, in a cycle.
    static func passThroughCycles(
        _ tables: [(plugin: String, coordinators: [CoordinatorDeclaration])]
    ) -> [CompositionIssue] {
        let edges = typeEdges(tables) { coordinator, route in
            route.deepLink == ""
                || (coordinator.kind == .wrapper && route.transition == .child && route.deepLink == nil)
        }
        return cycles(in: edges) { node, route, path in
            CompositionIssue(
                severity: .error, plugin: node.plugin, type: node.type, route: route, category: .cycle,
                reason:
                    "deep links can pass through \(path.last.map(\.description) ?? "") without consuming a segment and come back here: a cycle"
            )
        }
    }
}
