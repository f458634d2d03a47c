import SwitchyardProtocol

/// What in a coordinator type's declaration would fail only when a route is taken, found when the type is
/// registered: a deep-link capture that is not one of the route's params (`@Route(.push, deepLink: "todo/:id")` on
/// a factory that takes no input, say), so every link that matches would be refused at run time; a factory input
/// the params object cannot be decoded into (a `String`-backed enum that is not a ``RouteParameter``).
///
/// Not a compile-time error: the pattern is a runtime `String` and Swift cannot read a literal's contents during
/// type checking; only a macro could, and the SDK does not make every plugin build swift-syntax for it. A plugin's
/// own tests catch it instead, since `PluginTestConnection`'s handshake fails with the same message.
enum DeclarationCheck {
    /// One line per problem, naming the type (its route-table name and its Swift name), the route and the capture.
    static func problems(
        typeName: String, swiftType: Any.Type,
        routes: [(declaration: RouteDeclaration, takesNoInput: Bool, inputProblem: String?)]
    ) -> [String] {
        var problems: [String] = []
        for (declaration, takesNoInput, inputProblem) in routes {
            if let inputProblem {
                problems.append("\(typeName) (\(swiftType)): route '\(declaration.name)': \(inputProblem)")
            }
            guard let pattern = declaration.deepLink, let params = declaration.params else { continue }
            let names = params.map(\.name)
            for capture in captures(pattern) where !names.contains(capture) {
                let why =
                    if takesNoInput {
                        "its factory takes no input: give the factory a parameter (`(_ \(capture): String) -> …`)"
                    } else if names.isEmpty { "the route declares no params: declare '\(capture)' with `params:`" } else
                    {
                        "the route's params are only \(names.map { "'\($0)'" }.joined(separator: ", ")): name the input '\(capture)' (`param:` or a property of the input type)"
                    }
                problems.append(
                    "\(typeName) (\(swiftType)): route '\(declaration.name)': deep-link pattern '\(pattern)' captures '\(capture)', but \(why), or drop the capture"
                )
            }
        }
        return problems
    }

    /// The params a pattern captures, as the host reads them (Protocol/README.md §13): `:name` and `{name}` one
    /// segment each, `**name` the rest (`**` alone is captured as `**`).
    static func captures(_ pattern: String) -> [String] {
        pattern.split(separator: "/").compactMap { part -> String? in
            if part.hasPrefix("**") { return part.count > 2 ? String(part.dropFirst(2)) : "**" }
            if part.hasPrefix(":") && part.count > 1 { return String(part.dropFirst()) }
            if part.hasPrefix("{") && part.hasSuffix("}") && part.count > 2 {
                return String(part.dropFirst().dropLast())
            }
            return nil
        }
    }
}
