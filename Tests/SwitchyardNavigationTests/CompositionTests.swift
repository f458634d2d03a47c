@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

@Suite("Composition check", .timeLimit(.minutes(1)))
struct CompositionTests {
    static let plugins = App.tables.map(\.plugin)
    static let root = RouteRegistry.TypeKey(plugin: "main", type: "main")

    /// The demo tables with the `projects` type of the projects plugin replaced (its `project` type stays, since
    /// the todos plugin targets it).
    func check(
        replacing plugin: String, with coordinators: [CoordinatorDeclaration], running: [String]? = nil
    ) -> CompositionReport {
        let kept = App.tables.first { $0.plugin == plugin }?.coordinators.filter { $0.type != "projects" } ?? []
        let tables = App.tables.map { $0.plugin == plugin ? (plugin, coordinators + kept) : $0 }.filter {
            running?.contains($0.plugin) ?? true
        }
        return Composition.check(tables: tables, declaredPlugins: Self.plugins, root: Self.root)
    }

    @Test("the demo tables compose without issues")
    func clean() {
        let report = Composition.check(tables: App.tables, declaredPlugins: Self.plugins, root: Self.root)
        #expect(report.issues.isEmpty, "\(report.issues)")
        #expect(report.excluded.isEmpty && report.fatal == nil)
    }

    @Test(
        "a broken table excludes its plugin, naming the plugin, the type, the route and the reason",
        arguments: [
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(name: "list", transition: .push),
                        ])
                ], "list", "used twice"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(name: "tab1", transition: .tab),
                        ])
                ], "tab1", "does not fit a stack"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, routes: [RouteDeclaration(name: "list", transition: .root)])
                ], nil, "needs initialRoute"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(name: "a", transition: .push, deepLink: "p/:id"),
                            RouteDeclaration(name: "b", transition: .push, deepLink: "p/:name"),
                        ])
                ], "b", "collides with route 'a'"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root, deepLink: ""),
                            RouteDeclaration(name: "other", transition: .root, deepLink: ""),
                            RouteDeclaration(name: "p", transition: .push, deepLink: ""),
                        ])
                ], "p", "collides with route 'list'"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(name: "x", transition: .push, deepLink: "**/x"),
                        ])
                ], "x", "must be the last"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(
                                name: "home", transition: .push,
                                target: CoordinatorReference(plugin: "authenticated", type: "home")),
                        ])
                ], "home", "only stack coordinators can be pushed"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(
                                name: "ghost", transition: .modal,
                                target: CoordinatorReference(plugin: "todos", type: "ghost")),
                        ])
                ], "ghost", "does not declare"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(
                                name: "elsewhere", transition: .modal,
                                target: CoordinatorReference(plugin: "billing", type: "x")),
                        ])
                ], "elsewhere", "does not name"
            ),
            // Issue 15: a capture the route's declared params do not have fails every matching link at run time.
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(name: "item", transition: .push, deepLink: "item/:id", params: []),
                        ])
                ], "item",
                "deep-link pattern item/:id captures 'id', but the route declares no parameters: declare a parameter 'id' or drop the capture"
            ),
            (
                [
                    CoordinatorDeclaration(
                        type: "projects", kind: .stack, initialRoute: "list",
                        routes: [
                            RouteDeclaration(name: "list", transition: .root),
                            RouteDeclaration(
                                name: "item", transition: .push, deepLink: "item/:id",
                                params: [ParamDeclaration(name: "identifier", type: .string)]),
                        ])
                ],
                "item", "captures 'id', but the route declares only 'identifier'"
            ),
        ] as [([CoordinatorDeclaration], String?, String)])
    func brokenTables(_ coordinators: [CoordinatorDeclaration], _ route: String?, _ phrase: String) {
        let report = check(replacing: "projects", with: coordinators)
        #expect(report.excluded == ["projects"])
        let issue = report.issues.first { $0.severity == .error }
        #expect(issue?.plugin == "projects")
        #expect(issue?.route == route)
        #expect(issue?.reason.contains(phrase) == true, "\(String(describing: issue))")
        #expect(issue?.error.code == .compositionError)
        #expect(report.registry.declaration(plugin: "projects", type: "projects") == nil)
        // Routes into the excluded plugin become unavailable, the others still compose.
        #expect(
            report.issues.contains { $0.severity == .warning && $0.plugin == "authenticated" && $0.route == "projects" }
        )
        #expect(report.fatal == nil)
    }

    @Test("a route to a declared plugin that is not running is a warning, not an exclusion")
    func notRunning() {
        let report = check(replacing: "projects", with: [], running: Self.plugins.filter { $0 != "projects" })
        #expect(report.excluded.isEmpty)
        #expect(report.issues.allSatisfy { $0.severity == .warning })
        #expect(report.issues.contains { $0.plugin == "todos" && $0.route == "project" })
    }

    @Test("deep-link pass-through cycles are refused")
    func cycles() {
        let report = check(
            replacing: "projects",
            with: [
                CoordinatorDeclaration(
                    type: "projects", kind: .stack, initialRoute: "list",
                    routes: [
                        RouteDeclaration(name: "list", transition: .root),
                        RouteDeclaration(
                            name: "again", transition: .modal, deepLink: "",
                            target: CoordinatorReference(type: "projects")),
                    ])
            ])
        #expect(report.excluded == ["projects"])
        #expect(report.issues.contains { $0.reason.contains("cycle") })
    }

    @Test("a root that cannot be used is fatal")
    func fatalRoot() {
        let report = Composition.check(
            tables: App.tables, declaredPlugins: Self.plugins, root: .init(plugin: "main", type: "nope"))
        #expect(report.fatal?.reason.contains("does not declare type 'nope'") == true)
    }
}

@Suite("Renderers", .timeLimit(.minutes(1)))
struct RendererTests {
    @Test("text, DOT and Mermaid show every instance and entry; JSON is deterministic")
    func render() throws {
        var app = try App()
        try app.logIn()
        try app.run([.route("todo", ["id": "1"]), .route("createTodo")], from: app.id("todos", "todos"))
        let snapshot = app.tree.snapshot { plugin in plugin == "projects" ? (.unavailable, "restarting") : (.ok, nil) }
        let text = TreeRenderer.text(snapshot)
        #expect(text.hasPrefix("main.main#1 stack  (revision"))
        #expect(text.contains("root authenticated ⇒ authenticated.home"))
        #expect(text.contains("tab todos ● ⇒ todos.navigation"))
        #expect(text.contains("push todo{\"id\":\"1\"}"))
        #expect(text.contains("modal createTodo"))
        #expect(text.contains("[unavailable: restarting]"))
        let dot = TreeRenderer.dot(snapshot)
        #expect(dot.hasPrefix("digraph switchyard {") && dot.contains("style=dashed"))
        #expect(
            dot.components(separatedBy: " -> ").count - 1
                == snapshot.instances.reduce(0) {
                    $0 + ($1.tabs?.count ?? 0) + ($1.entries?.count ?? 0) + ($1.root == nil ? 0 : 1)
                        + ($1.child == nil ? 0 : 1)
                })
        let mermaid = TreeRenderer.mermaid(snapshot)
        #expect(mermaid.hasPrefix("flowchart LR") && mermaid.contains("-->|\"tab todos ●\"|"))
        #expect(
            TreeRenderer.json(snapshot)
                == TreeRenderer.json(
                    app.tree.snapshot { plugin in plugin == "projects" ? (.unavailable, "restarting") : (.ok, nil) }))
    }
}

extension String {
    fileprivate func components(separatedBy separator: String) -> [Substring] {
        var parts: [Substring] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            parts.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        parts.append(rest)
        return parts
    }
}
