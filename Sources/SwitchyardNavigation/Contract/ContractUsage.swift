public import SwitchyardProtocol

/// What a running app uses of one plugin: every instance of its types in the tree (kind and creation params) and
/// every entry of their routes (transition and params). A new version of the plugin may replace the running one only
/// if its contract still supports all of it (``ContractComparison/check(_:supports:)``), and the other running
/// modules' references to it (``ContractComparison/references(of:among:)``).
public struct ContractUsage: Sendable, Equatable {
    /// An instance of one of the plugin's types.
    public struct UsedInstance: Sendable, Equatable {
        /// Its id in the tree.
        public let instance: InstanceID
        /// Its coordinator type.
        public let type: String
        /// Nil for a placeholder (its type's kind was never known).
        public let kind: CoordinatorKind?
        /// The params it was created with.
        public let params: JSONValue?
    }

    /// An entry of one of those instances: the route it took, presented as it was, with its params.
    public struct UsedEntry: Sendable, Equatable {
        /// The instance it belongs to.
        public let instance: InstanceID
        /// Its id in the tree.
        public let entry: EntryID
        /// The instance's type.
        public let type: String
        /// The route that made it.
        public let route: String
        /// How it is presented (the route's, or the one a `route` step picked).
        public let transition: Transition
        /// The params the route was taken with.
        public let params: JSONValue?
    }

    /// The plugin's instances in use.
    public var instances: [UsedInstance]
    /// Their entries.
    public var entries: [UsedEntry]

    /// Usage given item by item (a host may also know of uses outside the tree).
    public init(instances: [UsedInstance] = [], entries: [UsedEntry] = []) {
        self.instances = instances
        self.entries = entries
    }

    /// Everything of `plugin` that `tree` holds, in instance order.
    public init(tree: NavigationTree, plugin: String) {
        var instances: [UsedInstance] = []
        var entries: [UsedEntry] = []
        for instance in tree.instances(of: plugin).sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
            instances.append(
                UsedInstance(instance: instance.id, type: instance.type, kind: instance.kind, params: instance.params))
            for entry in instance.allEntries {
                entries.append(
                    UsedEntry(
                        instance: instance.id, entry: entry.id, type: instance.type, route: entry.route,
                        transition: entry.transition,
                        params: entry.params))
            }
        }
        self.init(instances: instances, entries: entries)
    }
}

extension ContractComparison {
    /// What of `usage` the contract no longer supports, each classified by the rule a diff would name (findings are
    /// on the `.old` side: the running app), and naming the instance and entry.
    public static func check(_ contract: RouteContract, supports usage: ContractUsage) -> [ContractFinding] {
        var found: [ContractFinding] = []
        // Instances whose type is gone or of another kind: their entries are not judged one by one.
        var lost = Set<InstanceID>()
        for used in usage.instances {
            let at = JSONPointer.type(used.type)
            let what = "instance \(used.instance.rawValue) of type '\(used.type)'"
            guard let type = contract.types[used.type] else {
                found.append(
                    ContractFinding(
                        .typeRemoved, .old, at, "\(what) is in the tree; the new version has no type '\(used.type)'"))
                lost.insert(used.instance)
                continue
            }
            if let kind = used.kind, kind != type.kind {
                found.append(
                    ContractFinding(
                        .typeKindChanged, .old, at.appending("kind"),
                        "\(what) is a \(kind.rawValue); the new version makes it a \(type.kind.rawValue)"))
                lost.insert(used.instance)
                continue
            }
            for problem in valueProblems(used.params, type.params) {
                found.append(
                    ContractFinding(
                        problem.rule, .old, at.appending("params", problem.param),
                        "\(what) was created with params the new version does not take: \(problem.reason)"))
            }
        }
        for used in usage.entries where !lost.contains(used.instance) {
            guard let type = contract.types[used.type] else { continue }
            let at = JSONPointer.route(used.type, used.route)
            let what =
                "entry \(used.entry.rawValue) of instance \(used.instance.rawValue) (route '\(used.route)' of type '\(used.type)')"
            guard let route = type.routes[used.route] else {
                let rule: ContractRule = used.transition == .tab ? .tabRemoved : .routeRemoved
                found.append(
                    ContractFinding(rule, .old, at, "\(what) is in the tree; the new version has no such route"))
                continue
            }
            if !route.allowedTransitions.contains(used.transition) {
                found.append(
                    ContractFinding(
                        .routeTransitionChanged, .old, at.appending("transition"),
                        "\(what) is presented as \(used.transition.rawValue), which the new version's route does not allow"
                    ))
            }
            for problem in valueProblems(used.params, route.params) {
                found.append(
                    ContractFinding(
                        problem.rule, .old, at.appending("params", problem.param),
                        "\(what) has params the new version does not take: \(problem.reason)"))
            }
        }
        return found
    }

    /// Why params in use (values) do not fit a declaration, param by param, with the rule a diff would name.
    static func valueProblems(
        _ value: JSONValue?, _ declared: [String: ContractParam]?
    ) -> [(rule: ContractRule, param: String, reason: String)] {
        guard let declared else { return [] }
        let object: JSONObject
        switch value {
        case nil, .null?: object = JSONObject()
        case .object(let given)?: object = given
        case let other?: return [(.paramsDeclared, "", "params must be an object, not a \(other.kindName)")]
        }
        var problems: [(rule: ContractRule, param: String, reason: String)] = []
        for name in declared.keys.sorted() {
            guard let param = declared[name] else { continue }
            guard let given = object[name], given != .null else {
                if param.required { problems.append((.paramRequiredAdded, name, "missing required param '\(name)'")) }
                continue
            }
            if !given.matches(param.type) {
                problems.append(
                    (.paramTypeChanged, name, "param '\(name)' must be \(param.type.rawValue), is \(given.kindName)"))
            }
        }
        for key in object.keys where declared[key] == nil {
            problems.append((.paramRemoved, key, "param '\(key)' is not declared"))
        }
        return problems
    }
}
