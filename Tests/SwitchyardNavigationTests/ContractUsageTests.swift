@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// What a running app uses of a plugin, against a new version's contract: the question a live upgrade asks.
@Suite("Contract usage (§19.3, the library API)", .timeLimit(.minutes(1)))
struct ContractUsageTests {
    /// The demo signed in, on todo 42 and a project pushed over it.
    static func app() throws -> App {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        try app.run([.route("todo", ["id": "42"])], from: todos)
        try app.run([.route("project", ["id": "p1"])], from: todos)
        return app
    }

    static func todos(_ edit: (inout [CoordinatorDeclaration]) -> Void = { _ in }) -> RouteContract {
        var coordinators = App.tables.first { $0.plugin == "todos" }?.coordinators ?? []
        edit(&coordinators)
        return RouteContract(
            plugin: PluginInfo(name: "todos", version: "2.0.0"), protocolVersion: 1, coordinators: coordinators)
    }

    @Test(
        "what the tree uses of the plugin: its instances with kind and params, their entries with route, transition and params"
    )
    func usage() throws {
        let usage = ContractUsage(tree: try Self.app().tree, plugin: "todos")
        #expect(
            usage.instances.map { "\($0.type) \($0.kind?.rawValue ?? "-")" } == ["navigation wrapper", "todos stack"])
        #expect(
            usage.entries.map { "\($0.type).\($0.route) \($0.transition.rawValue)" } == [
                "navigation.content child", "todos.list root", "todos.todo push", "todos.project push",
            ])
        #expect(usage.entries.first { $0.route == "todo" }?.params == ["id": "42"])
    }

    @Test("the same table supports everything in use; a compatible change too")
    func supported() throws {
        let usage = ContractUsage(tree: try Self.app().tree, plugin: "todos")
        #expect(ContractComparison.check(Self.todos(), supports: usage).isEmpty)
        let widened = Self.todos { $0[1].routes.append(RouteDeclaration(name: "archive", transition: .push)) }
        #expect(ContractComparison.check(widened, supports: usage).isEmpty)
    }

    @Test(
        "what a new version no longer supports is named by the rule a diff would use, at the entry that uses it",
        arguments: [
            ("todo", ContractRule.routeRemoved, "/types/todos/routes/todo"),
            ("integer", .paramTypeChanged, "/types/todos/routes/todo/params/id"),
            ("modal", .routeTransitionChanged, "/types/todos/routes/todo/transition"),
            ("required", .paramRequiredAdded, "/types/todos/routes/todo/params/note"),
            ("undeclared", .paramRemoved, "/types/todos/routes/todo/params/id"),
            ("kind", .typeKindChanged, "/types/navigation/kind"),
        ])
    func unsupported(_ change: String, _ rule: ContractRule, _ pointer: String) throws {
        let usage = ContractUsage(tree: try Self.app().tree, plugin: "todos")
        let contract = Self.todos { coordinators in
            let todo = coordinators[1].routes.firstIndex { $0.name == "todo" } ?? 0
            switch change {
            case "todo": coordinators[1].routes.remove(at: todo)
            case "integer": coordinators[1].routes[todo].params = [ParamDeclaration(name: "id", type: .integer)]
            case "modal": coordinators[1].routes[todo].transition = .modal
            case "required": coordinators[1].routes[todo].params? += [ParamDeclaration(name: "note", type: .string)]
            case "undeclared": coordinators[1].routes[todo].params = []
            default:
                coordinators[0] = CoordinatorDeclaration(
                    type: "navigation", kind: .stack, initialRoute: "content",
                    routes: [
                        RouteDeclaration(
                            name: "content", transition: .root, target: CoordinatorReference(type: "todos"))
                    ])
            }
        }
        let findings = ContractComparison.check(contract, supports: usage)
        #expect(findings.map(\.rule) == [rule], "\(findings)")
        #expect(findings.first?.pointer.description == pointer)
        #expect(findings.allSatisfy { $0.side == .old && $0.isBreaking })
    }

    @Test("a type gone is one finding per instance; its entries are not reported again")
    func typeGone() throws {
        let usage = ContractUsage(tree: try Self.app().tree, plugin: "todos")
        let findings = ContractComparison.check(Self.todos { $0.remove(at: 0) }, supports: usage)
        #expect(findings.map(\.rule) == [.typeRemoved])
        #expect(findings.first?.message.contains("instance") == true)
    }
}
