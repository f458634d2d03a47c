@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

@Suite("Chains, ownership, answers and commits", .timeLimit(.minutes(1)))
struct ChainTests {
    @Test("the Stinsen README chain focusFirst(todos) → child → popToRoot → route(todo, id) applies as one revision")
    func stinsenChain() throws {
        var app = try App()
        try app.logIn()
        let home = app.id("authenticated", "home")
        let todos = app.id("todos", "todos")
        try app.run([.selectTab("projects")], from: home)
        try app.run([.route("todo", ["id": "1"]), .route("createTodo")], from: todos)
        let revision = app.tree.revision
        let result = try app.run([.focusFirst("todos"), .child, .popToRoot, .route("todo", ["id": "42"])], from: home)
        #expect(app.tree.revision == revision + 1)
        #expect(result.landedOn == todos)
        #expect(app.tree[home]?.selectedTabEntry?.route == "todos")
        #expect(app.tree[todos]?.entries.map(\.params) == [["id": "42"]])
        app.checkInvariants()
    }

    @Test(
        "a chain is atomic: when a later step fails nothing applies, and the instances it created are reported for destruction"
    )
    func atomicRollback() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        let before = app.snapshotJSON
        let revision = app.tree.revision
        let runner = ChainRunner(
            tree: app.tree, registry: app.registry, allocator: app.allocator, start: todos,
            steps: [.route("project", ["id": "p"]), .route("members"), .route("teleport")])
        var asked = 0
        while true {
            switch runner.advance() {
            case .needs(let need):
                asked += 1
                runner.resume(with: app.answer(need))
                continue
            case .done:
                Issue.record("the chain should fail on 'teleport'")
            case .failed(let failure):
                #expect(failure.error.code == .routeNotFound)
                #expect(
                    failure.created.map(\.plugin) == ["projects"],
                    "the project coordinator created on the way must be destroyed")
            }
            break
        }
        #expect(asked == 3, "route project, create project, route members")
        #expect(app.snapshotJSON == before && app.tree.revision == revision)
    }

    @Test("a rejected last hop leaves the revision unchanged")
    func rejectedLastHop() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        expectUnchanged(&app, .rejectedByGuard) { app throws(ResponseError) in
            try app.run([.route("todo", ["id": "1"]), .route("createTodo")], from: todos) { need in
                if case .route(let question) = need, question.route == "createTodo" {
                    return .route(.failure(ResponseError(.rejectedByGuard, "read-only mode")))
                }
                return nil
            }
        }
    }

    // MARK: Ownership

    @Test("a plugin changes its own instances, may ask an ancestor to route, and is refused anything else")
    func ownership() throws {
        var app = try App()
        try app.logIn()
        let main = try #require(app.tree.rootID)
        let home = app.id("authenticated", "home")
        let todos = app.id("todos", "todos")
        let projects = app.id("projects", "projects")
        try app.run([.route("todo", ["id": "1"])], from: todos, as: .plugin("todos"))
        // Ancestors: a route (decided by the owner) and a tab switch are allowed.
        try app.run([.route("about")], from: main, as: .plugin("todos"))
        try app.run([.selectTab("projects")], from: home, as: .plugin("todos"))
        // Changing another plugin's instance is not.
        expectUnchanged(&app, .notOwner) { app throws(ResponseError) in
            try app.run([.popLast], from: main, as: .plugin("todos"))
        }
        expectUnchanged(&app, .notOwner) { app throws(ResponseError) in
            try app.run([.popToRoot], from: todos, as: .plugin("projects"))
        }
        // Not an ancestor: not even a route.
        expectUnchanged(&app, .notOwner) { app throws(ResponseError) in
            try app.run([.route("project", ["id": "x"])], from: projects, as: .plugin("todos"))
        }
    }

    // MARK: Answers are checked against the route table

    @Test(
        "answers that contradict the route table are refused: a screen for a coordinator route, the wrong type, missing tabs"
    )
    func invalidAnswers() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        expectUnchanged(&app, .invalidAnswer) { app throws(ResponseError) in
            try app.run([.route("project", ["id": "1"])], from: todos) { _ in
                .route(.success(.init(content: .screen(ScreenDescriptor(name: "x")))))
            }
        }
        expectUnchanged(&app, .invalidAnswer) { app throws(ResponseError) in
            try app.run([.route("project", ["id": "1"])], from: todos) { need in
                if case .route = need {
                    return .route(
                        .success(
                            .init(
                                content: .coordinator(
                                    CoordinatorReference(plugin: "projects", type: "projects"), params: nil))))
                }
                return nil
            }
        }
        expectUnchanged(&app, .invalidAnswer) { app throws(ResponseError) in
            try app.run([.route("createTodo")], from: todos) { _ in
                .route(
                    .success(
                        .init(content: .coordinator(CoordinatorReference(plugin: "todos", type: "todos"), params: nil)))
                )
            }
        }
        let main = try #require(app.tree.rootID)
        expectUnchanged(&app, .invalidAnswer) { app throws(ResponseError) in
            try app.run([.setRoot("unauthenticated")], from: main) { need in
                if case .create(let question) = need, question.plugin == "unauthenticated" {
                    return .create(
                        .success(
                            .init(root: .init(route: "forgotPassword", content: .screen(ScreenDescriptor(name: "x"))))))
                }
                return nil
            }
        }
        expectUnchanged(&app, .invalidAnswer) { app throws(ResponseError) in
            try app.run([.restart], from: app.id("authenticated", "home")) { need in
                if case .create(let question) = need, question.plugin == "authenticated" {
                    return .create(
                        .success(.init(tabs: [.init(route: "todos", content: .screen(ScreenDescriptor(name: "x")))])))
                }
                return nil
            }
        }
    }

    @Test("a plugin that is unavailable fails the chain with pluginUnavailable, unchanged")
    func unavailable() throws {
        var app = try App()
        try app.logIn()
        expectUnchanged(&app, .pluginUnavailable) { app throws(ResponseError) in
            try app.run([.route("project", ["id": "1"])], from: app.id("todos", "todos")) { need in
                need.plugin == "projects" ? .create(.failure(.pluginUnavailable("projects", "restarting"))) : nil
            }
        }
    }

    // MARK: Concurrency

    @Test(
        "chains that started from the same revision commit when they touched different instances, and conflict when not"
    )
    func optimisticCommits() throws {
        var app = try App()
        try app.logIn()
        let base = app.tree
        let todos = app.id("todos", "todos")
        let projects = app.id("projects", "projects")
        func run(_ steps: [NavigationStep], from start: InstanceID) throws -> ChainResult {
            let runner = ChainRunner(
                tree: base, registry: app.registry, allocator: app.allocator, start: start, steps: steps)
            return try app.drive(runner)
        }
        let first = try run([.route("todo", ["id": "1"])], from: todos)
        let second = try run([.route("project", ["id": "p"])], from: projects)
        let third = try run([.route("createTodo")], from: todos)
        try app.tree.commit(first, startedFrom: base)
        try app.tree.commit(second, startedFrom: base)
        #expect(app.tree.revision == base.revision + 2)
        #expect(app.tree[todos]?.entries.count == 1 && app.tree[projects]?.entries.count == 1)
        #expect(throws: ResponseError.self) { try app.tree.commit(third, startedFrom: base) }
        app.checkInvariants()
    }

    // MARK: Snapshots

    @Test("a snapshot round-trips through JSON and rebuilds an equal tree; its encoding is deterministic")
    func snapshotRoundTrip() throws {
        var app = try App()
        try app.logIn()
        try app.run([.route("todo", ["id": "9"]), .route("createTodo")], from: app.id("todos", "todos"))
        let snapshot = app.tree.snapshot()
        let json = TreeRenderer.json(snapshot)
        let decoded = try Coding.decode(TreeSnapshot.self, from: try JSONParser.parse(json))
        #expect(decoded == snapshot)
        let rebuilt = try NavigationTree(snapshot: decoded)
        #expect(TreeRenderer.json(rebuilt.snapshot()) == json)
        #expect(rebuilt.nextInstanceID > snapshot.instances.map(\.id.rawValue).max()!)
        var broken = snapshot
        broken.instances.removeLast()
        #expect(throws: ResponseError.self) { try NavigationTree(snapshot: broken) }
    }
}
