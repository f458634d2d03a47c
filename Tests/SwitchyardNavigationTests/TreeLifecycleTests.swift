@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// What the host needs of the tree to replace a plugin's process while the app runs (spec §20): where the user is,
/// what an upgrade sends the new version, the state kept for a plugin, and the switch's revision.
@Suite("The tree and live upgrades (§20)", .timeLimit(.minutes(1)))
struct TreeLifecycleTests {
    /// The demo signed in, on todo 42, with project p1 pushed over it (another plugin's coordinator).
    static func app() throws -> App {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        try app.run([.route("todo", ["id": "42"])], from: todos)
        try app.run([.route("project", ["id": "p1"])], from: todos)
        return app
    }

    @Test("the selected path: the root, then each stack's top entry, the selected tab, a wrapper's child")
    func selectedPath() throws {
        var app = try Self.app()
        let path = { app.tree.selectedPath.compactMap { app.tree[$0].map { "\($0.plugin).\($0.type)" } } }
        #expect(path() == ["main.main", "authenticated.home", "todos.navigation", "todos.todos", "projects.project"])
        try app.run([.selectTab("projects")], from: app.id("authenticated", "home"))
        #expect(path() == ["main.main", "authenticated.home", "projects.projects"])
    }

    @Test("an upgrade's requests: every instance of the plugin, parents first, reason upgrade, with the old version")
    func upgradeRequests() throws {
        let app = try Self.app()
        let requests = app.tree.upgradeRequests(for: "todos", fromVersion: "1.0.0")
        #expect(requests.map(\.type) == ["navigation", "todos"])
        #expect(requests.allSatisfy { $0.reason == .upgrade && $0.fromVersion == "1.0.0" && $0.restore != nil })
        #expect(requests.map(\.state) == app.tree.restoreRequests(for: "todos").map(\.state))
    }

    @Test("the switch: the states answered, in one revision that changes no id, entry or selection")
    func commitStates() throws {
        let app = try Self.app()
        var tree = app.tree
        let stack = app.id("todos", "todos")
        let navigation = app.id("todos", "navigation")
        let changed = tree.commitStates([stack: ["todoID": "7"], navigation: app.tree[navigation]?.state ?? nil])
        #expect(changed == [stack])
        #expect(tree.revision == app.tree.revision + 1)
        #expect(tree[stack]?.state == ["todoID": "7"] && tree[stack]?.version == tree.revision)
        var expected = app.tree.snapshot()
        expected.revision = tree.revision
        if let index = expected.instances.firstIndex(where: { $0.id == stack }) {
            expected.instances[index].state = ["todoID": "7"]
        }
        #expect(tree.snapshot() == expected)
        // A switch that changes no state is still a revision: the plugin serving the instances changed.
        var same = app.tree
        #expect(same.commitStates([:]).isEmpty && same.revision == app.tree.revision + 1)
    }

    @Test("the state kept for a plugin is the compact JSON of its instances' states")
    func stateBytes() throws {
        var tree = try Self.app().tree
        let before = tree.stateBytes(of: "todos")
        #expect(tree.stateBytes(of: "projects") == 0)
        let stack = try #require(tree.instances(of: "todos").first { $0.type == "todos" }?.id)
        tree.commitStates([stack: ["todo": .string(String(repeating: "x", count: 1_000))]])
        #expect(tree.stateBytes(of: "todos") > before + 990)
    }
}
