import SwitchyardProtocol

/// One change between two contracts (or one thing in use that a contract no longer supports), classified by a rule.
public struct ContractFinding: Sendable, Equatable, CustomStringConvertible {
    /// Which document the pointer is in.
    public enum Side: Sendable, Hashable {
        /// The old contract: what was removed is found there.
        case old
        /// The new contract: what was added or changed.
        case new
        /// Another module's contract (a reference it makes), by the plugin's name.
        case module(String)
    }

    /// The kind of change.
    public let rule: ContractRule
    /// The document ``pointer`` is in.
    public let side: Side
    /// What changed: `/types/todos/routes/todo/params/id`.
    public let pointer: JSONPointer
    /// What changed, in words: `param 'id' of route 'todo' of type 'todos' is integer, was string`.
    public let message: String

    /// A finding of `rule` at `pointer` in the `side` document.
    public init(_ rule: ContractRule, _ side: Side, _ pointer: JSONPointer, _ message: String) {
        self.rule = rule
        self.side = side
        self.pointer = pointer
        self.message = message
    }

    /// Whether it can break what relied on the old version (its rule's class).
    public var isBreaking: Bool { rule.isBreaking }

    public var description: String { "\(rule.rawValue) \(pointer): \(message)" }
}

/// Compares contracts with the rules of ``ContractRule`` (Protocol/README.md §19.3). Pure: no files, no processes, so
/// a host can ask it at run time whether a new version of a running module may replace the old one.
public enum ContractComparison {
    /// Every change from `old` to `new`, in the order of the documents (by pointer), each classified.
    public static func diff(_ old: RouteContract, _ new: RouteContract) -> [ContractFinding] {
        var found: [ContractFinding] = []
        if old.protocolVersion != new.protocolVersion {
            found.append(
                ContractFinding(
                    .protocolVersionChanged, .new, JSONPointer(["protocolVersion"]),
                    "protocol version \(old.protocolVersion) became \(new.protocolVersion)"))
        }
        for name in old.types.keys.sorted() where new.types[name] == nil {
            found.append(ContractFinding(.typeRemoved, .old, .type(name), "type '\(name)' was removed"))
        }
        for name in new.types.keys.sorted() {
            guard let now = new.types[name] else { continue }
            guard let before = old.types[name] else {
                found.append(
                    ContractFinding(.typeAdded, .new, .type(name), "type '\(name)' (\(now.kind.rawValue)) was added"))
                continue
            }
            found += compare(type: name, before, now)
        }
        return found.sorted { ($0.pointer, $0.rule.rawValue) < ($1.pointer, $1.rule.rawValue) }
    }

    /// Problems of the references between `contract` and `others` (routes of one that open a type of the other), in
    /// both directions, found by the composition the host runs (``Composition/check(tables:declaredPlugins:root:)``).
    /// Contracts are named by their `plugin.name`; a reference to a module not among them is not judged.
    public static func references(of contract: RouteContract, among others: [RouteContract]) -> [ContractFinding] {
        let name = contract.plugin.name
        let all = [contract] + others.filter { $0.plugin.name != name }
        let byName = Dictionary(all.map { ($0.plugin.name, $0) }, uniquingKeysWith: { first, _ in first })
        var declared = all.map(\.plugin.name)
        for module in all {
            for plugin in module.references.keys where !declared.contains(plugin) { declared.append(plugin) }
        }
        let report = Composition.check(
            tables: all.map { ($0.plugin.name, $0.coordinators) }, declaredPlugins: declared, root: nil)
        var found: [ContractFinding] = []
        for issue in report.issues where issue.isReference {
            guard let type = issue.type, let routeName = issue.route, let source = byName[issue.plugin],
                let route = source.types[type]?.routes[routeName]
            else { continue }
            // Routes into the module's own types are its table's business, not a reference between modules.
            let target = route.target?.plugin ?? issue.plugin
            guard target != issue.plugin, issue.plugin == name || target == name else { continue }
            var pointer = JSONPointer.route(type, routeName)
            if let param = issue.param { pointer = pointer.appending("targetParams", param) }
            let rule: ContractRule = issue.category == .unknownType ? .referenceUnresolved : .referenceIncompatible
            let side: ContractFinding.Side = issue.plugin == name ? .new : .module(issue.plugin)
            found.append(
                ContractFinding(
                    rule, side, pointer,
                    "module '\(issue.plugin)', type '\(type)', route '\(routeName)': \(issue.reason)"))
        }
        return found
    }

    // MARK: - Types and routes

    static func compare(type name: String, _ old: ContractType, _ new: ContractType) -> [ContractFinding] {
        let at = JSONPointer.type(name)
        guard old.kind == new.kind else {
            // Every route of another kind has other transitions: the kind is the change to report.
            return [
                ContractFinding(
                    .typeKindChanged, .new, at.appending("kind"),
                    "type '\(name)' was a \(old.kind.rawValue), is a \(new.kind.rawValue)")
            ]
        }
        var found: [ContractFinding] = []
        if old.initialRoute != new.initialRoute {
            found.append(
                ContractFinding(
                    .initialRouteChanged, .new, at.appending("initialRoute"),
                    "type '\(name)' starts on '\(new.initialRoute ?? "its first tab")' instead of '\(old.initialRoute ?? "its first tab")'"
                ))
        }
        if old.customDeepLinks != new.customDeepLinks {
            found.append(
                ContractFinding(
                    old.customDeepLinks ? .customDeepLinksRemoved : .customDeepLinksAdded,
                    old.customDeepLinks ? .old : .new,
                    at.appending("customDeepLinks"),
                    old.customDeepLinks
                        ? "type '\(name)' no longer resolves deep links itself"
                        : "type '\(name)' resolves deep links itself"))
        }
        found += params(old.params, new.params, at: at.appending("params"), of: "type '\(name)'")
        for route in old.routes.keys.sorted() where new.routes[route] == nil {
            let isTab = old.routes[route]?.transition == .tab
            found.append(
                ContractFinding(
                    isTab ? .tabRemoved : .routeRemoved, .old, .route(name, route),
                    "\(isTab ? "tab" : "route") '\(route)' of type '\(name)' was removed"))
        }
        for route in new.routes.keys.sorted() {
            guard let now = new.routes[route] else { continue }
            guard let before = old.routes[route] else {
                let isTab = now.transition == .tab
                found.append(
                    ContractFinding(
                        isTab ? .tabAdded : .routeAdded, .new, .route(name, route),
                        "\(isTab ? "tab" : "route") '\(route)' of type '\(name)' was added"))
                continue
            }
            found += compare(route: route, of: name, before, now)
        }
        let kept = old.tabs.filter(new.tabs.contains)
        if kept != new.tabs.filter(old.tabs.contains) {
            found.append(
                ContractFinding(
                    .tabsReordered, .new, at.appending("tabs"),
                    "the tabs of type '\(name)' are in another order: \(new.tabs.joined(separator: ", ")) (were \(old.tabs.joined(separator: ", ")))"
                ))
        }
        return found
    }

    static func compare(
        route name: String, of type: String, _ old: ContractRoute, _ new: ContractRoute
    ) -> [ContractFinding] {
        let at = JSONPointer.route(type, name)
        let what = "route '\(name)' of type '\(type)'"
        var found: [ContractFinding] = []
        if old.transition != new.transition {
            found.append(
                ContractFinding(
                    .routeTransitionChanged, .new, at.appending("transition"),
                    "\(what) presents as \(new.transition.rawValue), was \(old.transition.rawValue)"))
        }
        let lost = Set(old.transitions).subtracting(new.allowedTransitions)
        if !lost.isEmpty {
            found.append(
                ContractFinding(
                    .routeTransitionsNarrowed, .new, at.appending("transitions"),
                    "\(what) no longer allows \(lost.map(\.rawValue).sorted().joined(separator: ", "))"))
        }
        let gained = new.allowedTransitions.subtracting(old.allowedTransitions).subtracting([new.transition])
        if !gained.isEmpty {
            found.append(
                ContractFinding(
                    .routeTransitionsWidened, .new, at.appending("transitions"),
                    "\(what) also allows \(gained.map(\.rawValue).sorted().joined(separator: ", "))"))
        }
        if old.target != new.target {
            let describe = { (target: CoordinatorReference?) in target.map { "the coordinator \($0)" } ?? "a screen" }
            found.append(
                ContractFinding(
                    .routeTargetChanged, .new, new.target == nil ? at : at.appending("target"),
                    "\(what) shows \(describe(new.target)) instead of \(describe(old.target))"))
        } else if old.targetParams != new.targetParams {
            found.append(
                ContractFinding(
                    .targetParamsChanged, .new, new.targetParams == nil ? at : at.appending("targetParams"),
                    "\(what) creates \(new.target.map(\.description) ?? "its target") with other params"))
        }
        found += deepLink(old.deepLink, new.deepLink, at: at, of: what)
        found += params(old.params, new.params, at: at.appending("params"), of: what)
        for action in old.actions.keys.sorted() where new.actions[action] == nil {
            found.append(
                ContractFinding(
                    .actionRemoved, .old, at.appending("actions", action), "action '\(action)' of \(what) was removed"))
        }
        for action in new.actions.keys.sorted() {
            guard let before = old.actions[action] else {
                found.append(
                    ContractFinding(
                        .actionAdded, .new, at.appending("actions", action), "action '\(action)' of \(what) was added"))
                continue
            }
            found += params(
                before.params, new.actions[action]?.params, at: at.appending("actions", action, "params"),
                of: "action '\(action)' of \(what)")
        }
        return found
    }

    // MARK: - Deep links

    static func deepLink(_ old: String?, _ new: String?, at route: JSONPointer, of what: String) -> [ContractFinding] {
        let at = route.appending("deepLink")
        switch (old, new) {
        case (nil, nil): return []
        case (let old?, nil):
            return [ContractFinding(.deepLinkRemoved, .old, at, "\(what) lost its deep link '\(old)'")]
        case (nil, let new?): return [ContractFinding(.deepLinkAdded, .new, at, "\(what) has the deep link '\(new)'")]
        case (let old?, let new?):
            guard old != new, let before = try? PathPattern(parsing: old), let now = try? PathPattern(parsing: new)
            else { return [] }
            if !covers(now, before) {
                return [
                    ContractFinding(
                        .deepLinkNarrowed, .new, at, "\(what): '\(new)' does not match every link '\(old)' matched")
                ]
            }
            let rule: ContractRule = covers(before, now) ? .deepLinkRewritten : .deepLinkWidened
            return [
                ContractFinding(
                    rule, .new, at,
                    "\(what): '\(new)' matches \(rule == .deepLinkRewritten ? "the same links as" : "every link of, and more than,") '\(old)'"
                )
            ]
        }
    }

    /// Whether every sequence of segments `narrow` consumes, `wide` consumes too (the same count: what is left goes
    /// on to the coordinator the route opens). Captures and `*` take any one segment, `**` one or more, last only.
    static func covers(_ wide: PathPattern, _ narrow: PathPattern) -> Bool {
        let w = wide.elements, n = narrow.elements
        func isRest(_ element: PathPattern.Element) -> Bool { if case .rest = element { true } else { false } }
        func takes(_ wide: PathPattern.Element, _ narrow: PathPattern.Element) -> Bool {
            switch (wide, narrow) {
            case (.capture, .literal), (.capture, .capture), (.capture, .wildcard), (.wildcard, .literal),
                (.wildcard, .capture),
                (.wildcard, .wildcard):
                true
            case (.literal(let a), .literal(let b)): a == b
            default: false
            }
        }
        let wideRest = w.lastIndex(where: isRest)
        let narrowRest = n.lastIndex(where: isRest)
        switch (wideRest, narrowRest) {
        case (nil, nil):
            return w.count == n.count && zip(w, n).allSatisfy(takes)
        case (nil, .some):
            return false  // the narrow one consumes any length; the wide one a fixed count
        case (let rest?, nil):
            return rest < n.count && zip(w.prefix(rest), n.prefix(rest)).allSatisfy(takes)
        case (let rest?, let other?):
            return rest <= other && zip(w.prefix(rest), n.prefix(rest)).allSatisfy(takes)
        }
    }

    // MARK: - Params

    /// The changes of one params declaration (a route's, an action's, a type's). Callers pass params and the owner
    /// accepts them, so what accepts less is breaking.
    static func params(
        _ old: [String: ContractParam]?, _ new: [String: ContractParam]?, at: JSONPointer, of what: String
    ) -> [ContractFinding] {
        switch (old, new) {
        case (nil, nil): return []
        case (nil, let new?):
            return [
                ContractFinding(
                    .paramsDeclared, .new, at,
                    "\(what) declares its params (\(new.keys.sorted().joined(separator: ", "))); it accepted any")
            ]
        case (.some, nil):
            return [
                ContractFinding(
                    .paramsUndeclared, .new, at.tokens.count > 1 ? JSONPointer(at.tokens.dropLast()) : at,
                    "\(what) accepts any params")
            ]
        case (let old?, let new?):
            var found: [ContractFinding] = []
            for name in old.keys.sorted() where new[name] == nil {
                found.append(
                    ContractFinding(.paramRemoved, .old, at.appending(name), "param '\(name)' of \(what) was removed"))
            }
            for name in new.keys.sorted() {
                guard let now = new[name] else { continue }
                guard let before = old[name] else {
                    found.append(
                        ContractFinding(
                            now.required ? .paramRequiredAdded : .paramOptionalAdded, .new, at.appending(name),
                            "\(now.required ? "required" : "optional") param '\(name)' (\(now.type.rawValue)) of \(what) was added"
                        ))
                    continue
                }
                if before.type != now.type {
                    let widened = ParamCompatibility.fits(before.type, now.type)
                    found.append(
                        ContractFinding(
                            widened ? .paramTypeWidened : .paramTypeChanged, .new, at.appending(name, "type"),
                            "param '\(name)' of \(what) is \(now.type.rawValue), was \(before.type.rawValue)"))
                }
                if before.required != now.required {
                    found.append(
                        ContractFinding(
                            now.required ? .paramMadeRequired : .paramMadeOptional, .new,
                            at.appending(name, "required"),
                            "param '\(name)' of \(what) is \(now.required ? "required" : "optional") now"))
                }
            }
            return found
        }
    }
}
