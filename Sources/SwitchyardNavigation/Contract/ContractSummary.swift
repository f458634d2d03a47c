import SwitchyardProtocol

// A contract for a person: what `check-plugin` shows an author under the checks, so they see what they promise.
extension RouteContract {
    /// A few words on the whole: how many types, routes, deep links and actions, and what other modules it opens.
    public var headline: String {
        let routes = types.values.reduce(0) { $0 + $1.routes.count }
        let links = types.values.reduce(0) { $0 + $1.routes.values.count(where: { $0.deepLink != nil }) }
        let actions = types.values.reduce(0) { $0 + $1.routes.values.reduce(0) { $0 + $1.actions.count } }
        var text =
            "\(count(types.count, "type")), \(count(routes, "route")), \(count(links, "deep link")), \(count(actions, "action"))"
        let opened = references.flatMap { plugin, targets in targets.keys.map { "\(plugin).\($0)" } }.sorted()
        text += opened.isEmpty ? "; opens no other module's type" : "; opens \(opened.joined(separator: ", "))"
        return text
    }

    /// One line per type and per route, aligned: transition, deep link, params, actions and target.
    public var summaryLines: [String] {
        var lines: [String] = []
        for name in types.keys.sorted() {
            guard let type = types[name] else { continue }
            var header = "type \(name) (\(type.kind.rawValue)"
            if let initial = type.initialRoute { header += ", starts on \(initial)" }
            if type.customDeepLinks { header += ", resolves its own deep links" }
            if let params = type.params { header += ", created with \(describe(params))" }
            lines.append(header + ")")
            let order = type.tabs + type.routes.keys.filter { !type.tabs.contains($0) }.sorted()
            let width = order.map(\.count).max() ?? 0
            for routeName in order {
                guard let route = type.routes[routeName] else { continue }
                var parts = [
                    route.transition.rawValue
                        + (route.transitions.isEmpty
                            ? "" : "|" + route.transitions.map(\.rawValue).joined(separator: "|"))
                ]
                if let link = route.deepLink { parts.append("link \(link.isEmpty ? "\"\"" : link)") }
                if let params = route.params { parts.append("params \(describe(params))") }
                if let target = route.target {
                    parts.append("→ \(target)" + (route.targetParams.map { " with \(describe($0))" } ?? ""))
                }
                if !route.actions.isEmpty {
                    parts.append(
                        "actions "
                            + route.actions.keys.sorted().map { name in
                                route.actions[name]?.params.map { "\(name)(\(describe($0)))" } ?? name
                            }.joined(separator: ", "))
                }
                lines.append(
                    "  \(routeName + String(repeating: " ", count: width - routeName.count))  \(parts.joined(separator: "  "))"
                )
            }
        }
        return lines
    }

    private func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }

    private func describe(_ params: [String: ContractParam]) -> String {
        guard !params.isEmpty else { return "none" }
        return params.keys.sorted().compactMap { name in
            params[name].map { "\(name)\($0.required ? "" : "?"): \($0.type.rawValue)" }
        }.joined(separator: ", ")
    }
}
