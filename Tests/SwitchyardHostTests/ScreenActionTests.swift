import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// Screen actions (Protocol/README.md §12.6) through the real host and the demo's plugins, one per SDK: the Swift
/// todos, the Python profile and the Node projects coordinators each decide what their screens' actions do.
@Suite("Screen actions across plugin processes", .heavy, .timeLimit(.minutes(1)))
struct ScreenActionTests {
    @Test("each SDK's coordinator answers its screen's action with steps, applied as one revision; undeclared ones are refused")
    func actionsInEverySDK() async throws {
        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, logs: logs) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            var tree = await host.snapshot()

            // Swift: the todo screen's "complete" pops it (the demo's todos coordinator).
            let todos = try #require(tree.find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("todo", ["id": "1"]), .route("todo", ["id": "7"])])
            let first = try #require(await host.snapshot().instance(todos.id)?.entries?.first?.entry)
            var before = await host.snapshot().revision
            var result = try await host.userAction(instance: todos.id, entry: first, action: "complete", params: ["id": "1"])
            #expect(result.revision == before + 1)
            tree = await host.snapshot()
            #expect(tree.instance(todos.id)?.entries?.isEmpty == true)
            // In the same revision, the todos tab's badge (another plugin's tab bar) counts the open todos.
            #expect(tree.find("authenticated", "home")?.tabs?.first { $0.route == "todos" }?.badge == "3")

            // Python: settings' "save" (with a declared optional param) pops the settings screen.
            let profile = try #require(tree.find("profile", "profile"))
            _ = try await host.navigate(from: profile.id, [.route("settings")])
            let settings = try #require(await host.snapshot().instance(profile.id)?.entries?.last?.entry)
            result = try await host.userAction(instance: profile.id, entry: settings, action: "save", params: ["theme": "dark"])
            #expect(await host.snapshot().instance(profile.id)?.entries?.isEmpty == true)
            try await logs.waitFor("[profile] profile: settings saved (dark)")

            // Node: members' "showOwner" routes to another plugin's coordinator; settings' "close" dismisses it.
            let projects = try #require(tree.find("projects", "projects"))
            let project = try await host.navigate(from: projects.id, [.route("project", ["id": "p1"]), .route("members")]).instance
            let members = try #require(await host.snapshot().instance(project)?.entries?.last?.entry)
            result = try await host.userAction(instance: project, entry: members, action: "showOwner")
            tree = await host.snapshot()
            #expect(tree.instance(result.instance)?.plugin == "profile")
            #expect(tree.instance(project)?.entries?.map(\.route) == ["members", "owner"])
            _ = try await host.navigate(from: project, [.popToRoot, .route("settings")])
            let sheet = try #require(await host.snapshot().instance(project)?.entries?.last?.entry)
            _ = try await host.userAction(instance: project, entry: sheet, action: "close")
            #expect(await host.snapshot().instance(project)?.entries?.isEmpty == true)

            // Refusals change nothing and reach no plugin: an undeclared action, params of the wrong type.
            _ = try await host.navigate(from: profile.id, [.route("settings")])
            let again = try #require(await host.snapshot().instance(profile.id)?.entries?.last?.entry)
            let root = try #require(await host.snapshot().instance(todos.id)?.root?.entry)
            before = await host.snapshot().revision
            let undeclared = await #expect(throws: ResponseError.self) { try await host.userAction(instance: todos.id, entry: root, action: "complete") }
            #expect(undeclared?.code == .invalidParams && undeclared?.data?["field"] == "action", "\(String(describing: undeclared))")
            let mistyped = await #expect(throws: ResponseError.self) {
                try await host.userAction(instance: profile.id, entry: again, action: "save", params: ["theme": 3])
            }
            #expect(mistyped?.code == .invalidParams && mistyped?.data?["field"] == "params", "\(String(describing: mistyped))")
            let gone = await #expect(throws: ResponseError.self) { try await host.userAction(instance: profile.id, entry: settings, action: "save") }
            #expect(gone?.code == .instanceNotFound)
            #expect(await host.snapshot().revision == before)
        }
    }
}
