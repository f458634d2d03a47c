public import SwitchyardProtocol

/// What a plugin promises the modules it is composed with (Protocol/README.md §19): its types, their routes, the
/// params each takes, the deep links it handles and the actions its screens emit, and the other modules' types it
/// opens. Made from the route table of the handshake (``init(plugin:protocolVersion:coordinators:)``) or read from a
/// contract file (``init(parsing:)``), written as deterministic bytes (``encoded()``), compared by
/// ``ContractComparison`` and composed by ``Composition`` exactly as running plugins' tables are.
///
/// Everything is keyed by name, so a JSON pointer (`/types/todos/routes/todo/params/id`) names the same thing in
/// every version of a contract. What concerns only the plugin and the UI shell (`appearance`, `presentation`) is left
/// out: changing it breaks no other module.
public struct RouteContract: Sendable, Equatable {
    /// The version of the contract format this code reads and writes (`contractVersion`).
    public static let formatVersion = 1

    /// The plugin as it names itself in the handshake (`initialize`'s `plugin`).
    public var plugin: PluginInfo
    /// The protocol version it chose.
    public var protocolVersion: Int
    /// Its coordinator types, by name.
    public var types: [String: ContractType]

    /// A contract of these types (as a reader or a test builds one).
    public init(plugin: PluginInfo, protocolVersion: Int, types: [String: ContractType]) {
        self.plugin = plugin
        self.protocolVersion = protocolVersion
        self.types = types
    }

    /// The contract of a route table. Assumes a table whose names are unique (one that composes, §14): a name given
    /// twice keeps its last declaration.
    public init(plugin: PluginInfo, protocolVersion: Int, coordinators: [CoordinatorDeclaration]) {
        var types: [String: ContractType] = [:]
        for coordinator in coordinators { types[coordinator.type] = ContractType(coordinator) }
        self.init(plugin: plugin, protocolVersion: protocolVersion, types: types)
    }

    /// The route table again, for composition: types and routes in name order, tabs in their declared order.
    public var coordinators: [CoordinatorDeclaration] {
        types.keys.sorted().compactMap { name in types[name].map { $0.declaration(named: name) } }
    }

    /// The routes that open another module's coordinator: `plugin` → `type` → the pointers of the routes (a
    /// derived index, written into the document so a reader sees at once what the module depends on).
    public var references: [String: [String: [JSONPointer]]] {
        var found: [String: [String: [JSONPointer]]] = [:]
        for (typeName, type) in types {
            for (routeName, route) in type.routes {
                guard let target = route.target, let plugin = target.plugin, plugin != self.plugin.name else {
                    continue
                }
                found[plugin, default: [:]][target.type, default: []].append(JSONPointer.route(typeName, routeName))
            }
        }
        return found.mapValues { $0.mapValues { $0.sorted() } }
    }
}

/// A coordinator type in a contract.
public struct ContractType: Sendable, Equatable {
    /// Stack, tabs or wrapper.
    public var kind: CoordinatorKind
    /// Stack: the root shown at creation; tabs: the tab selected at creation.
    public var initialRoute: String?
    /// The plugin resolves deep links into this type itself (`coordinator/deepLink`).
    public var customDeepLinks: Bool
    /// The params an instance is created with; nil: not declared (any).
    public var params: [String: ContractParam]?
    /// Its routes, by name.
    public var routes: [String: ContractRoute]
    /// A tabs type's tab routes in display order (empty for other kinds).
    public var tabs: [String]

    /// A type of a contract.
    public init(
        kind: CoordinatorKind, initialRoute: String? = nil, customDeepLinks: Bool = false,
        params: [String: ContractParam]? = nil,
        routes: [String: ContractRoute], tabs: [String] = []
    ) {
        self.kind = kind
        self.initialRoute = initialRoute
        self.customDeepLinks = customDeepLinks
        self.params = params
        self.routes = routes
        self.tabs = tabs
    }

    init(_ declaration: CoordinatorDeclaration) {
        var routes: [String: ContractRoute] = [:]
        for route in declaration.routes { routes[route.name] = ContractRoute(route) }
        self.init(
            kind: declaration.kind, initialRoute: declaration.initialRoute,
            customDeepLinks: declaration.customDeepLinks == true,
            params: ContractParam.map(declaration.params), routes: routes,
            tabs: declaration.routes.filter { $0.transition == .tab }.map(\.name))
    }

    func declaration(named name: String) -> CoordinatorDeclaration {
        // Tabs first in display order (their order is the tab bar's), then the other routes by name.
        let ordered = tabs.filter { routes[$0] != nil } + routes.keys.filter { !tabs.contains($0) }.sorted()
        return CoordinatorDeclaration(
            type: name, kind: kind, initialRoute: initialRoute,
            routes: ordered.compactMap { routeName in routes[routeName].map { $0.declaration(named: routeName) } },
            customDeepLinks: customDeepLinks ? true : nil, params: ContractParam.declarations(params))
    }
}

/// A route in a contract.
public struct ContractRoute: Sendable, Equatable {
    /// How it presents by default.
    public var transition: Transition
    /// The other transitions a `route` step may pick (§12.8), sorted; empty: none.
    public var transitions: [Transition]
    /// The deep-link pattern, as declared.
    public var deepLink: String?
    /// Nil: not declared (any params accepted).
    public var params: [String: ContractParam]?
    /// The coordinator it opens, as declared (`plugin` absent: this plugin); nil: a screen.
    public var target: CoordinatorReference?
    /// The params it creates that coordinator with, when declared.
    public var targetParams: [String: ContractParam]?
    /// The actions its screen emits, by name.
    public var actions: [String: ContractAction]

    /// A route of a contract.
    public init(
        transition: Transition, transitions: [Transition] = [], deepLink: String? = nil,
        params: [String: ContractParam]? = nil,
        target: CoordinatorReference? = nil, targetParams: [String: ContractParam]? = nil,
        actions: [String: ContractAction] = [:]
    ) {
        self.transition = transition
        self.transitions = transitions
        self.deepLink = deepLink
        self.params = params
        self.target = target
        self.targetParams = targetParams
        self.actions = actions
    }

    init(_ route: RouteDeclaration) {
        var actions: [String: ContractAction] = [:]
        for action in route.actions ?? [] {
            actions[action.name] = ContractAction(params: ContractParam.map(action.params))
        }
        let others = Set(route.transitions ?? []).subtracting([route.transition])
        self.init(
            transition: route.transition, transitions: others.sorted { $0.rawValue < $1.rawValue },
            deepLink: route.deepLink,
            params: ContractParam.map(route.params), target: route.target,
            targetParams: ContractParam.map(route.targetParams),
            actions: actions)
    }

    /// Every transition a `route` step may present it with: the default and the others.
    public var allowedTransitions: Set<Transition> { Set(transitions).union([transition]) }

    func declaration(named name: String) -> RouteDeclaration {
        RouteDeclaration(
            name: name, transition: transition, deepLink: deepLink, params: ContractParam.declarations(params),
            target: target,
            actions: actions.isEmpty
                ? nil
                : actions.keys.sorted().map {
                    ActionDeclaration(name: $0, params: ContractParam.declarations(actions[$0]?.params))
                },
            transitions: transitions.isEmpty ? nil : transitions, targetParams: ContractParam.declarations(targetParams)
        )
    }
}

/// An action a route's screen emits.
public struct ContractAction: Sendable, Equatable {
    /// Nil: not declared (any params accepted).
    public var params: [String: ContractParam]?

    /// An action with these declared params (nil: any).
    public init(params: [String: ContractParam]? = nil) { self.params = params }
}

/// A declared param: its type and whether it is required (explicit in a contract, whatever the table left out).
public struct ContractParam: Sendable, Equatable {
    /// The JSON type its values must have.
    public var type: ParamType
    /// Whether a caller must pass it.
    public var required: Bool

    /// A param of `type`, required unless said otherwise (the route table's default).
    public init(type: ParamType, required: Bool = true) {
        self.type = type
        self.required = required
    }

    static func map(_ declarations: [ParamDeclaration]?) -> [String: ContractParam]? {
        declarations.map { list in
            var params: [String: ContractParam] = [:]
            for declaration in list {
                params[declaration.name] = ContractParam(type: declaration.type, required: declaration.isRequired)
            }
            return params
        }
    }

    static func declarations(_ params: [String: ContractParam]?) -> [ParamDeclaration]? {
        params.map { map in
            map.keys.sorted().compactMap { name in
                map[name].map { ParamDeclaration(name: name, type: $0.type, required: $0.required) }
            }
        }
    }
}
