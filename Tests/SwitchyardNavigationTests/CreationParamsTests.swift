@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// A type's declared creation params (§5 `params` of a coordinator type) and what a route that opens it passes
/// (`targetParams`): checked by composition before anything runs, and by the host when an answer opens the type.
@Suite("Creation params (§5, §14)", .timeLimit(.minutes(1)))
struct CreationParamsTests {
    static let idParam = [ParamDeclaration(name: "id", type: .string)]

    /// The demo tables with `projects.project` taking `id` and todos' `project` route passing `passed`.
    static func tables(
        passing passed: [ParamDeclaration]?
    ) -> [(plugin: String, coordinators: [CoordinatorDeclaration])] {
        App.tables.map { table in
            (
                table.plugin,
                table.coordinators.map { declaration in
                    var copy = declaration
                    if table.plugin == "projects" && declaration.type == "project" { copy.params = idParam }
                    if table.plugin == "todos" && declaration.type == "todos" {
                        copy.routes = copy.routes.map { route in
                            var route = route
                            if route.name == "project" { route.targetParams = passed }
                            return route
                        }
                    }
                    return copy
                }
            )
        }
    }

    static func check(passing passed: [ParamDeclaration]?) -> CompositionReport {
        let tables = tables(passing: passed)
        return Composition.check(
            tables: tables, declaredPlugins: tables.map(\.plugin), root: .init(plugin: "main", type: "main"))
    }

    @Test("params a route passes that fit the type's compose; undeclared on either side is not judged")
    func fitting() {
        #expect(Self.check(passing: Self.idParam).issues.isEmpty)
        #expect(Self.check(passing: nil).issues.isEmpty)
    }

    @Test(
        "params that do not fit leave the passing plugin out, naming plugin, type, route and param",
        arguments: [
            (
                [ParamDeclaration(name: "id", type: .integer)], "id",
                "passes param 'id' as integer, but projects.project takes it as string"
            ),
            ([], "id", "projects.project requires param 'id', which the route does not pass"),
            ([ParamDeclaration(name: "id", type: .string, required: false)], "id", "passes only sometimes"),
            (
                idParam + [ParamDeclaration(name: "tab", type: .string)], "tab",
                "passes param 'tab', but projects.project declares only 'id'"
            ),
        ] as [([ParamDeclaration], String, String)])
    func mismatched(_ passed: [ParamDeclaration], _ param: String, _ phrase: String) throws {
        let report = Self.check(passing: passed)
        #expect(report.excluded == ["todos"])
        let issue = try #require(report.issues.first { $0.severity == .error })
        #expect(issue.plugin == "todos" && issue.type == "todos" && issue.route == "project" && issue.param == param)
        #expect(issue.category == .params && issue.isReference)
        #expect(issue.reason.contains(phrase), "\(issue.reason)")
        #expect(issue.description.contains("plugin 'todos', type 'todos', route 'project', param '\(param)'"))
        #expect(issue.error.data?["param"] == .string(param))
    }

    @Test("targetParams on a route that opens no coordinator is a broken table")
    func targetParamsWithoutTarget() {
        var tables = App.tables
        tables[3].coordinators[1].routes[2].targetParams = Self.idParam  // todos.createTodo, a screen
        let report = Composition.check(tables: tables, declaredPlugins: tables.map(\.plugin), root: nil)
        #expect(report.issues.contains { $0.route == "createTodo" && $0.reason.contains("opens no coordinator") })
    }

    @Test("an answer that opens a type with params it does not take is an invalid answer, and nothing changes")
    func enforcedAtRunTime() throws {
        var app = try App()
        app.registry = RouteRegistry(tables: Self.tables(passing: Self.idParam))
        try app.logIn()
        let todos = app.id("todos", "todos")
        for params in [nil, ["id": 7], ["id": "1", "extra": true]] as [JSONValue?] {
            expectUnchanged(&app, .invalidAnswer) { app throws(ResponseError) in
                try app.run([.route("project", ["id": "1"])], from: todos) { need in
                    guard case .route = need else { return nil }
                    return .route(
                        .success(
                            .init(
                                content: .coordinator(
                                    CoordinatorReference(plugin: "projects", type: "project"), params: params))))
                }
            }
        }
        // The default answer passes the route's params on: {"id": "1"} fits.
        try app.run([.route("project", ["id": "1"])], from: todos)
        #expect(app.instance("projects", "project")?.params == ["id": "1"])
    }
}
