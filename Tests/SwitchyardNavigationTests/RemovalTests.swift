@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// §12.1 and §8: what a step removes is reported to its owners (`coordinator/dismissed`, top first), also the entries
/// of the instances it destroys; then those instances are destroyed, deepest first. A failed chain destroys what it
/// created deepest first too.
@Suite("Removal reports and destroy order", .timeLimit(.minutes(1)))
struct RemovalTests {
    /// The effects as short strings: `dismissed OWNER/ROUTE` and `destroy TYPE`, in order.
    static func describe(_ effects: [ChainEffect], _ tree: NavigationTree) -> [String] {
        effects.compactMap { effect in
            switch effect {
            case .dismissed(_, let plugin, _, let route, _): "dismissed \(plugin)/\(route)"
            case .destroy(_, _, let type): "destroy \(type)"
            case .tabSelected, .appeared: nil
            }
        }
    }

    @Test("popLast of the entry holding a pushed flow reports the flow's entries, top first, before the entry itself")
    func popLastOfAFlow() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        try app.run([.route("registration"), .route("confirm"), .route("terms")], from: stack)
        let result = try app.run([.popLast], from: stack)
        #expect(
            Self.describe(result.effects, app.tree) == [
                "dismissed unauthenticated/terms", "dismissed unauthenticated/confirm",
                "dismissed unauthenticated/start",
                "dismissed unauthenticated/registration", "destroy registration",
            ])
        #expect(
            result.effects.allSatisfy {
                if case .dismissed(_, _, _, _, .navigation) = $0 {
                    true
                } else if case .destroy = $0 {
                    true
                } else {
                    false
                }
            })
    }

    @Test(
        "dismissCoordinator of another plugin's flow (todos → projects.project → members): each plugin hears of its own entries, then the flow goes"
    )
    func dismissCoordinatorAcrossPlugins() throws {
        var app = try App()
        try app.logIn()
        let flow = try app.run([.route("project", ["id": "p1"]), .route("members")], from: app.id("todos", "todos"))
            .landedOn
        #expect(
            Self.describe(try app.run([.dismissCoordinator], from: flow).effects, app.tree) == [
                "dismissed projects/members", "dismissed projects/overview", "dismissed todos/project",
                "destroy project",
            ])
    }

    @Test("a replaced root is reported with everything under and above it; keepStack keeps the entries above")
    func rootReplaced() throws {
        var app = try App()
        let main = try #require(app.tree.rootID)
        try app.run([.route("registration")], from: app.id("unauthenticated", "unauthenticated"))
        try app.run([.route("about")], from: main)
        app.loggedIn = true
        var result = try app.run([.setRoot("authenticated")], from: main)
        #expect(
            Self.describe(result.effects, app.tree) == [
                "dismissed main/about",
                "dismissed unauthenticated/start", "dismissed unauthenticated/registration",
                "dismissed unauthenticated/login",
                "dismissed main/unauthenticated",
                "destroy registration", "destroy unauthenticated",
            ])
        try app.run([.route("about")], from: main)
        result = try app.run([.setRoot("guest", ["name": "ann"])], from: main)
        #expect(Self.describe(result.effects, app.tree).first == "dismissed main/about")
        result = try app.run([.route("about"), .setRoot("guest", ["name": "bob"], keepStack: true)], from: main)
        #expect(
            Self.describe(result.effects, app.tree) == ["dismissed main/guest"],
            "the modal above stays; the old root goes")
        #expect(app.tree[main]?.entries.map(\.route) == ["about"])
    }

    @Test(
        "restart reports every entry the instance showed (a child's and the app's root alike), then destroys what they held"
    )
    func restart() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        try app.run([.route("forgotPassword")], from: stack)
        var result = try app.run([.restart], from: stack)
        #expect(
            Self.describe(result.effects, app.tree) == [
                "dismissed unauthenticated/forgotPassword", "dismissed unauthenticated/login",
            ])
        try app.run([.route("registration")], from: stack)
        result = try app.run([.restart])
        #expect(
            Self.describe(result.effects, app.tree) == [
                "dismissed unauthenticated/start", "dismissed unauthenticated/registration",
                "dismissed unauthenticated/login",
                "dismissed main/unauthenticated", "destroy registration", "destroy unauthenticated",
            ])
        app.checkInvariants()
    }

    @Test("restart of tabs reports each tab's content and the tabs, last tab first")
    func restartTabs() throws {
        var app = try App()
        try app.logIn()
        let result = try app.run([.restart], from: app.id("authenticated", "home"))
        #expect(
            Self.describe(result.effects, app.tree) == [
                "dismissed authenticated/profile",
                "dismissed projects/list", "dismissed authenticated/projects",
                "dismissed todos/list", "dismissed todos/content", "dismissed authenticated/todos",
                "destroy projects", "destroy todos", "destroy navigation",
            ])
    }

    @Test("a chain that fails after creating nested instances reports them deepest first (children before parents)")
    func failedChainDestroysDeepestFirst() throws {
        var app = try App()
        try app.logIn()
        let runner = ChainRunner(
            tree: app.tree, registry: app.registry, allocator: app.allocator, start: app.tree.rootID!,
            steps: [
                .setRoot("guest", ["name": "x"]), .setRoot("authenticated", ["user": "eve"]), .focusFirst("projects"),
                .route("project", ["id": "p"]), .route("members"),
            ])
        let failure = app.failure(of: runner) { need in
            if case .route(let question) = need, question.route == "members" {
                .route(.failure(ResponseError(.rejectedByGuard, "private")))
            } else {
                nil
            }
        }
        #expect(failure?.error.code == .rejectedByGuard)
        // Created home, navigation, projects, todos (the wrapper's child), project: destroyed in reverse.
        #expect(failure?.created.map(\.type) == ["project", "todos", "projects", "navigation", "home"])
    }

    @Test(
        "a guard's rejection names the hop it refused: plugin, instance, type and route, beside the plugin's own data")
    func guardContext() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        do {
            try app.run([.route("forgotPassword")], from: stack) { _ in
                .route(.failure(ResponseError(.rejectedByGuard, "not today", data: ["why": "closed"])))
            }
            Issue.record("the guard did not refuse")
        } catch {
            #expect(error.code == .rejectedByGuard && error.message == "not today")
            #expect(
                error.data?["why"] == "closed" && error.data?["plugin"] == "unauthenticated"
                    && error.data?["type"] == "unauthenticated")
            #expect(error.data?["instance"] == .int(stack.rawValue) && error.data?["route"] == "forgotPassword")
        }
    }

    @Test("the user dismissing a root entry is refused with notAllowed naming the instance and the entry")
    func dismissingARoot() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        let root = try #require(app.tree[stack]?.root?.id)
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.pop(root)], from: stack, reason: .user)
        }
        do {
            try app.run([.pop(root)], from: stack, reason: .user)
        } catch {
            #expect(error.data?["entry"] == .int(root.rawValue) && error.data?["instance"] == .int(stack.rawValue))
        }
    }
}
