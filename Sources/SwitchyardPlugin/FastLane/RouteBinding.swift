/// Binds a coordinator the core makes to the core (each route wrapper's name and core) without `Mirror`.
///
/// Why: reading a new instance's wrappers through `Mirror` cost ~110,000 instructions per instance (the runtime
/// demangles every stored property's type, each time), more than everything else a restore does; a restarted plugin
/// pays it once per instance it owned before its tree is served again. Every wrapper reports itself here as it is
/// initialised, so the core gets a new instance's wrappers from its initialiser, in initialisation order, and names
/// them as the type's prototype's wrappers in the same order were named (the prototype's are matched to their
/// properties once, by identity, through `Mirror`). Whatever does not line up is bound through `Mirror` as before.
@MainActor
enum RouteBinding {
    /// A type's wrappers in initialisation order: each one's property name and wrapper class.
    typealias Layout = [(name: String, wrapper: ObjectIdentifier)]

    /// The wrappers initialised since the innermost ``collecting(_:)`` began; nil while nothing collects.
    private static var collected: [any AnyRoute]?

    /// Called by every route wrapper's initialiser.
    static func initialised(_ route: any AnyRoute) { collected?.append(route) }

    /// Runs `make`; returns what it made and the route wrappers initialised meanwhile, in order.
    static func collecting<T>(_ make: @MainActor () -> T) -> (T, [any AnyRoute]) {
        let outer = collected
        collected = []
        let made = make()
        let routes = collected ?? []
        collected = outer.map { $0 + routes }
        return (made, routes)
    }

    /// The layout of a type from its prototype: the wrappers its initialiser made (`collected`) named as `Mirror`
    /// found them on the prototype (`named`). Nil if the initialiser made wrappers the prototype does not hold
    /// (another coordinator built in `init`): instances of that type are bound through `Mirror`.
    static func layout(collected: [any AnyRoute], named: [(name: String, route: any AnyRoute)]) -> Layout? {
        guard collected.count == named.count else { return nil }
        var layout: Layout = []
        for route in collected {
            guard let match = named.first(where: { $0.route === route }) else { return nil }
            layout.append((match.name, ObjectIdentifier(type(of: route))))
        }
        return layout
    }

    /// Names `routes` (a new instance's, in initialisation order) after `layout` and binds them to `core`; false,
    /// binding nothing, if they do not line up with it.
    static func bind(_ routes: [any AnyRoute], _ layout: Layout, to core: PluginCore) -> Bool {
        guard routes.count == layout.count,
            zip(routes, layout).allSatisfy({ ObjectIdentifier(type(of: $0)) == $1.wrapper })
        else { return false }
        for (route, slot) in zip(routes, layout) {
            route.name = slot.name
            route.core = core
        }
        return true
    }
}
