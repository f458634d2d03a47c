public import SwitchyardProtocol

/// The composed route tables of all plugins: which coordinator types exist, and their routes.
public struct RouteRegistry: Sendable {
    public struct TypeKey: Hashable, Sendable, CustomStringConvertible {
        public let plugin: String
        public let type: String
        public init(plugin: String, type: String) {
            self.plugin = plugin
            self.type = type
        }
        public var description: String { "\(plugin).\(type)" }
    }

    /// A route a deep link can take, with its pattern parsed.
    public struct LinkRoute: Sendable {
        public let route: RouteDeclaration
        public let pattern: PathPattern
    }

    private var declarations: [TypeKey: CoordinatorDeclaration] = [:]
    /// Each type's deep-link routes, parsed once when its table is added: a link is matched against every pattern
    /// of each type it passes, and parsing them at every hop cost more than all the rest of resolving it.
    private var linkRoutes: [TypeKey: [LinkRoute]] = [:]
    /// Plugins whose tables are known, in manifest order.
    public private(set) var plugins: [String] = []
    /// Whether any type asks for `coordinator/appeared` (§12.9): while none does, chains never look.
    public private(set) var asksAppearance = false

    public init() {}

    /// A registry from each plugin's declared coordinator types.
    public init(tables: [(plugin: String, coordinators: [CoordinatorDeclaration])]) {
        for (plugin, coordinators) in tables { add(plugin: plugin, coordinators: coordinators) }
    }

    public mutating func add(plugin: String, coordinators: [CoordinatorDeclaration]) {
        if !plugins.contains(plugin) { plugins.append(plugin) }
        for declaration in coordinators {
            let key = TypeKey(plugin: plugin, type: declaration.type)
            declarations[key] = declaration
            // A pattern that does not parse matches nothing (composition reports it).
            linkRoutes[key] = declaration.routes.compactMap { route in
                guard let text = route.deepLink, let pattern = try? PathPattern(parsing: text) else { return nil }
                return LinkRoute(route: route, pattern: pattern)
            }
            if declaration.appearance == true { asksAppearance = true }
        }
    }

    public mutating func remove(plugin: String) {
        plugins.removeAll { $0 == plugin }
        for key in declarations.keys where key.plugin == plugin {
            declarations[key] = nil
            linkRoutes[key] = nil
        }
        asksAppearance = declarations.values.contains { $0.appearance == true }
    }

    public func declaration(plugin: String, type: String) -> CoordinatorDeclaration? {
        declarations[TypeKey(plugin: plugin, type: type)]
    }

    /// The routes of a type that declare a deep-link pattern, in declaration order.
    public func linkRoutes(of key: TypeKey) -> [LinkRoute] { linkRoutes[key] ?? [] }

    public func declaration(of instance: Instance) -> CoordinatorDeclaration? {
        declaration(plugin: instance.plugin, type: instance.type)
    }

    public func coordinators(of plugin: String) -> [CoordinatorDeclaration] {
        declarations.filter { $0.key.plugin == plugin }.sorted { $0.key.type < $1.key.type }.map(\.value)
    }

    public func has(plugin: String) -> Bool { plugins.contains(plugin) }

    /// The coordinator a route opens, with the plugin resolved (absent in the declaration: the declaring plugin).
    public static func target(of route: RouteDeclaration, declaredBy plugin: String) -> TypeKey? {
        route.target.map { TypeKey(plugin: $0.plugin ?? plugin, type: $0.type) }
    }
}
