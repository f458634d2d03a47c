// Reflection over a coordinator's route wrappers: the fallback where a type's layout was not learned from its
// prototype (RouteBinding), and the way tests and unit-built objects find their core.
extension PluginCore {
    /// The route wrappers of an object, named after their properties (`_todo` → `todo`), in declaration order.
    static func namedRoutes(_ object: AnyObject) -> [(name: String, route: any AnyRoute)] {
        var result: [(String, any AnyRoute)] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        var levels: [Mirror] = []
        while let current = mirror {
            levels.insert(current, at: 0)
            mirror = current.superclassMirror
        }
        for level in levels {
            for child in level.children {
                guard let route = child.value as? any AnyRoute, var label = child.label else { continue }
                if label.hasPrefix("_") { label.removeFirst() }
                route.name = label
                result.append((label, route))
            }
        }
        return result
    }

    /// The core that created or adopted `object`, read from its route wrappers (nil for an object no core has
    /// registered, such as one a unit test built itself, or a coordinator declaring no routes).
    static func owner(of object: AnyObject) -> PluginCore? {
        var mirror: Mirror? = Mirror(reflecting: object)
        while let level = mirror {
            for child in level.children {
                if let route = child.value as? any AnyRoute, let core = route.core { return core }
            }
            mirror = level.superclassMirror
        }
        return nil
    }

    /// A prototype for a type outside any running plugin (tests building chains).
    static func standalonePrototype(_ type: AnyObject.Type) -> AnyObject? {
        guard let coordinator = type as? any Coordinatable.Type else { return nil }
        let object = coordinator.init()
        _ = namedRoutes(object)
        return object
    }
}
