@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

@Suite("Tree operations", .timeLimit(.minutes(1)))
struct OperationTests {
    @Test("creating the root builds the initial tree across plugins as one revision")
    func initialTree() throws {
        let app = try App()
        #expect(app.tree.revision == 1)
        let main = try #require(app.tree.root)
        #expect(main.plugin == "main" && main.root?.route == "unauthenticated")
        let unauthenticated = try #require(app.instance("unauthenticated", "unauthenticated"))
        #expect(unauthenticated.parent?.instance == main.id)
        #expect(unauthenticated.root?.content == .screen(ScreenDescriptor(name: "login")))
        app.checkInvariants()
    }

    // MARK: route

    @Test("route pushes or presents with the declared transition and lands on a child coordinator when it opens one")
    func route() throws {
        var app = try App()
        let unauthenticated = app.id("unauthenticated", "unauthenticated")
        var result = try app.run([.route("forgotPassword")], from: unauthenticated)
        #expect(app.tree[unauthenticated]?.entries.map(\.transition) == [.modal])
        #expect(result.landedOn == unauthenticated)
        result = try app.run([.route("registration")], from: unauthenticated)
        let registration = try #require(app.instance("unauthenticated", "registration"))
        #expect(result.landedOn == registration.id)
        #expect(app.tree[unauthenticated]?.entries.last?.content == .coordinator(registration.id))
        #expect(registration.root?.route == "start")
        app.checkInvariants()
    }

    @Test("two instances of one type get their own ids (identity is host-assigned)")
    func identity() throws {
        var app = try App()
        let unauthenticated = app.id("unauthenticated", "unauthenticated")
        let first = try app.run([.route("registration")], from: unauthenticated).landedOn
        let second = try app.run([.route("registration")], from: first.parentOr(app)).landedOn
        #expect(first != second)
        #expect(app.tree.allInstances.filter { $0.type == "registration" }.count == 2)
    }

    @Test("an unknown route, a root route, a route on tabs and bad params fail and change nothing")
    func routeErrors() throws {
        var app = try App()
        let unauthenticated = app.id("unauthenticated", "unauthenticated")
        expectUnchanged(&app, .routeNotFound) { app throws(ResponseError) in
            try app.run([.route("teleport")], from: unauthenticated)
        }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.route("login")], from: unauthenticated)
        }
        try app.logIn()
        let todos = app.id("todos", "todos")
        expectUnchanged(&app, .invalidParams) { app throws(ResponseError) in try app.run([.route("todo")], from: todos)
        }
        expectUnchanged(&app, .invalidParams) { app throws(ResponseError) in
            try app.run([.route("todo", ["id": 42])], from: todos)
        }
        expectUnchanged(&app, .invalidParams) { app throws(ResponseError) in
            try app.run([.route("todo", ["id": "1", "extra": true])], from: todos)
        }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.route("todos")], from: app.id("authenticated", "home"))
        }
    }

    // MARK: pops

    @Test("popLast removes the top entry, push or modal alike; at the root it is an error that changes nothing")
    func popLast() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        try app.run([.route("registration")], from: stack)
        try app.run([.route("forgotPassword")], from: stack)
        let result = try app.run([.popLast], from: stack)
        #expect(app.tree[stack]?.entries.map(\.route) == ["registration"])
        #expect(
            result.effects.contains {
                if case .dismissed(_, "unauthenticated", _, "forgotPassword", .navigation) = $0 { true } else { false }
            })
        try app.run([.popLast], from: stack)
        #expect(app.tree[stack]?.entries.isEmpty == true)
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.popLast], from: stack) }
    }

    @Test("pop(entry) removes that entry and everything above it (Stinsen's router pop); the root cannot be popped")
    func popEntry() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        try app.run([.route("forgotPassword"), .route("registration"), .parent, .route("forgotPassword")], from: stack)
        let entries = try #require(app.tree[stack]?.entries)
        try app.run([.pop(entries[1].id)], from: stack)
        #expect(app.tree[stack]?.entries.map(\.id) == [entries[0].id])
        #expect(app.instance("unauthenticated", "registration") == nil)
        let root = try #require(app.tree[stack]?.root?.id)
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.pop(root)], from: stack) }
        expectUnchanged(&app, .instanceNotFound) { app throws(ResponseError) in
            try app.run([.pop(EntryID(9_999))], from: stack)
        }
    }

    @Test(
        "popTo keeps entries 0…index (-1 keeps the root only); popCount removes from the top; out of range is an error")
    func popToAndCount() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        try app.run(
            [
                .route("todo", ["id": "1"]), .route("todo", ["id": "2"]), .route("todo", ["id": "3"]),
                .route("createTodo"),
            ], from: todos)
        try app.run([.popTo(1)], from: todos)
        #expect(app.tree[todos]?.entries.count == 2)
        try app.run([.popCount(1)], from: todos)
        #expect(app.tree[todos]?.entries.map(\.params) == [["id": "1"]])
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.popTo(5)], from: todos) }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.popCount(2)], from: todos) }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.popCount(0)], from: todos) }
        try app.run([.popTo(-1)], from: todos)
        #expect(app.tree[todos]?.entries.isEmpty == true)
    }

    @Test("popToRoot clears this coordinator's pushes and modals (Stinsen); at the root it is a no-op, not an error")
    func popToRoot() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        try app.run([.route("registration"), .route("confirm")], from: stack)
        let registration = app.id("unauthenticated", "registration")
        try app.run([.popToRoot], from: registration)
        #expect(app.tree[registration]?.entries.isEmpty == true)
        #expect(app.tree[stack]?.entries.count == 1, "the parent's stack is not this coordinator's")
        try app.run([.popToRoot], from: stack)
        let revision = app.tree.revision
        let result = try app.run([.popToRoot], from: stack)
        #expect(!result.changed && app.tree.revision == revision)
    }

    @Test("popToInitialRoute of a pushed child removes its entries and whatever the parent shows above it")
    func popToInitialRoute() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        try app.run([.route("registration"), .route("confirm"), .route("terms")], from: stack)
        let registration = app.id("unauthenticated", "registration")
        try app.run([.route("forgotPassword")], from: stack)  // above the pushed registration, in the parent
        try app.run([.popToInitialRoute], from: registration)
        #expect(app.tree[registration]?.entries.isEmpty == true)
        #expect(app.tree[stack]?.entries.map(\.route) == ["registration"])
        #expect(app.tree.topCoordinator(from: app.tree.rootID!) == registration)
    }

    // MARK: roots

    @Test("setRoot replaces the root and clears the entries above it; the old root's subtree is destroyed")
    func setRoot() throws {
        var app = try App()
        let main = try #require(app.tree.rootID)
        try app.run([.route("about")], from: main)
        let oldRoot = app.id("unauthenticated", "unauthenticated")
        app.loggedIn = true
        let result = try app.run([.setRoot("authenticated")], from: main)
        #expect(app.tree[main]?.root?.route == "authenticated")
        #expect(app.tree[main]?.entries.isEmpty == true, "entries above an old root belonged to its flow")
        #expect(app.tree[oldRoot] == nil)
        #expect(
            result.effects.contains(.destroy(instance: oldRoot, plugin: "unauthenticated", type: "unauthenticated")))
        #expect(result.landedOn == app.id("authenticated", "home"))
        app.checkInvariants()
    }

    @Test("setRoot to the active root with equal params is a no-op that keeps the same child (Stinsen)")
    func setRootIdempotent() throws {
        var app = try App()
        try app.logIn()
        let home = app.id("authenticated", "home")
        let revision = app.tree.revision
        let result = try app.run([.setRoot("authenticated")])
        #expect(!result.changed && app.tree.revision == revision)
        #expect(result.landedOn == home)
        #expect(app.id("authenticated", "home") == home)
    }

    @Test("setRoot with keepStack keeps the entries above the root (Stinsen's behaviour, on request)")
    func setRootKeepStack() throws {
        var app = try App()
        let main = try #require(app.tree.rootID)
        try app.run([.route("about")], from: main)
        app.loggedIn = true
        try app.run([.setRoot("authenticated", keepStack: true)], from: main)
        #expect(app.tree[main]?.entries.map(\.route) == ["about"])
    }

    @Test("a guard rejecting setRoot leaves the tree exactly as it was")
    func guardRejects() throws {
        var app = try App()
        expectUnchanged(&app, .rejectedByGuard) { app throws(ResponseError) in try app.run([.setRoot("authenticated")])
        }
    }

    @Test("isRoot, hasRoot, currentRoute, isInStack and topCoordinator answer from the tree")
    func queries() throws {
        var app = try App()
        try app.logIn()
        let main = try #require(app.tree.rootID)
        let home = app.id("authenticated", "home")
        let todos = app.id("todos", "todos")
        #expect(try app.tree.isRoot(main, route: "authenticated"))
        #expect(try !app.tree.isRoot(main, route: "unauthenticated"))
        #expect(try app.tree.hasRoot(main, route: "authenticated") == home)
        #expect(try app.tree.hasRoot(main, route: "unauthenticated") == nil)
        try app.run([.route("todo", ["id": "7"])], from: todos)
        #expect(try app.tree.currentRoute(todos) == "todo")
        #expect(try app.tree.isInStack(todos, route: "todo", params: ["id": "7"]))
        #expect(try !app.tree.isInStack(todos, route: "todo", params: ["id": "8"]))
        #expect(app.tree.topCoordinator(from: main) == todos)
        try app.run([.hasRoot("authenticated")])
        expectUnchanged(&app, .routeNotFound) { app throws(ResponseError) in try app.run([.hasRoot("unauthenticated")])
        }
        #expect(try app.tree.answer(.init(query: .topCoordinator)) == .int(todos.rawValue))
    }

    // MARK: focusFirst and tabs

    @Test("focusFirst on a stack truncates after the first match (root not searched); no match fails unchanged")
    func focusFirstStack() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        try app.run([.route("todo", ["id": "1"]), .route("todo", ["id": "2"]), .route("createTodo")], from: todos)
        try app.run([.focusFirst("todo", ["id": "2"])], from: todos)
        #expect(app.tree[todos]?.entries.map(\.params) == [["id": "1"], ["id": "2"]])
        try app.run([.focusFirst("todo")], from: todos)
        #expect(app.tree[todos]?.entries.count == 1)
        expectUnchanged(&app, .routeNotFound) { app throws(ResponseError) in
            try app.run([.focusFirst("list")], from: todos)
        }
        expectUnchanged(&app, .routeNotFound) { app throws(ResponseError) in
            try app.run([.focusFirst("createTodo")], from: todos)
        }
    }

    @Test("focusFirst and selectTab on tabs select the tab and land on its content; re-tap is reported as a repeat")
    func tabs() throws {
        var app = try App()
        try app.logIn()
        let home = app.id("authenticated", "home")
        var result = try app.run([.focusFirst("projects")], from: home)
        #expect(app.tree[home]?.selectedTabEntry?.route == "projects")
        #expect(result.landedOn == app.id("projects", "projects"))
        #expect(
            result.effects == [.tabSelected(instance: home, plugin: "authenticated", tab: "projects", isRepeat: false)])
        let revision = app.tree.revision
        result = try app.run([.selectTab("projects")], from: home)
        #expect(
            result.effects == [.tabSelected(instance: home, plugin: "authenticated", tab: "projects", isRepeat: true)])
        #expect(app.tree.revision == revision, "a re-tap changes no state")
        result = try app.run([.selectTab("profile")], from: home)
        #expect(result.landedOn == home, "the profile tab shows a screen")
        expectUnchanged(&app, .routeNotFound) { app throws(ResponseError) in
            try app.run([.selectTab("settings")], from: home)
        }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.selectTab("todos")], from: app.id("todos", "todos"))
        }
    }

    // MARK: modals

    @Test(
        "modals stack (one policy: Stinsen's and SUICoordinator's); dismiss removes the top-most modal and what is above it"
    )
    func modals() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        try app.run(
            [
                .route("createTodo"), .route("todo", ["id": "1"]), .route("share", ["id": 9]),
                .route("todo", ["id": "2"]),
            ], from: todos)
        #expect(app.tree[todos]?.entries.map(\.transition) == [.modal, .push, .fullScreen, .push])
        try app.run([.dismiss], from: todos)
        #expect(app.tree[todos]?.entries.map(\.route) == ["createTodo", "todo"])
        try app.run([.dismiss], from: todos)
        #expect(app.tree[todos]?.entries.isEmpty == true)
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.dismiss], from: todos) }
    }

    @Test("close dismisses the top-most modal if there is one, else pops; with neither it is an error")
    func close() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        try app.run([.route("todo", ["id": "1"]), .route("createTodo"), .route("todo", ["id": "2"])], from: todos)
        try app.run([.close], from: todos)
        #expect(app.tree[todos]?.entries.map(\.route) == ["todo"])
        try app.run([.close], from: todos)
        #expect(app.tree[todos]?.entries.isEmpty == true)
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.close], from: todos) }
    }

    // MARK: dismissCoordinator, finishFlow, restart

    @Test(
        "dismissCoordinator removes the instance, everything above it and below it; every plugin's instance is destroyed deepest first"
    )
    func dismissCoordinator() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        // todos → project (projects plugin) → members; and a modal above the project entry.
        try app.run([.route("project", ["id": "p1"]), .route("members")], from: todos)
        let project = app.id("projects", "project")
        try app.run([.route("createTodo")], from: todos)
        let result = try app.run([.dismissCoordinator], from: project)
        #expect(result.landedOn == todos)
        #expect(app.tree[todos]?.entries.isEmpty == true, "the entry holding it and the modal above it are gone")
        #expect(app.tree[project] == nil)
        #expect(
            result.effects.filter { if case .destroy = $0 { true } else { false } } == [
                .destroy(instance: project, plugin: "projects", type: "project")
            ])
        let dismissedRoutes = result.effects.compactMap { effect -> String? in
            if case .dismissed(todos, "todos", _, let route, .navigation) = effect { route } else { nil }
        }
        #expect(dismissedRoutes == ["createTodo", "project"], "top first, to the owner of the stack they left")
        app.checkInvariants()
    }

    @Test("the root of a stack, a tab and the tree's root cannot be dismissed; a wrapper goes with its child")
    func dismissCoordinatorRules() throws {
        var app = try App()
        try app.logIn()
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.dismissCoordinator], from: app.id("authenticated", "home"))
        }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.dismissCoordinator], from: app.id("todos", "navigation"))
        }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.dismissCoordinator], from: app.id("todos", "todos"))
        }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.dismissCoordinator]) }
    }

    @Test(
        "finishFlow on a tab's child finishes the whole tabs coordinator (SUICoordinator); here that is a root, so it is refused"
    )
    func finishFlow() throws {
        var app = try App()
        try app.logIn()
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.finishFlow], from: app.id("todos", "todos"))
        }
        // A pushed flow finishes like dismissCoordinator.
        let unauthenticatedApp = try App()
        var other = unauthenticatedApp
        let stack = other.id("unauthenticated", "unauthenticated")
        try other.run([.route("registration")], from: stack)
        try other.run([.finishFlow], from: other.id("unauthenticated", "registration"))
        #expect(other.tree[stack]?.entries.isEmpty == true)
    }

    @Test("restart keeps the id, destroys the content below and asks the plugin for fresh initial content")
    func restart() throws {
        var app = try App()
        try app.logIn()
        let home = app.id("authenticated", "home")
        let todosWrapper = app.id("todos", "navigation")
        try app.run([.selectTab("projects")], from: home)
        let result = try app.run([.restart], from: home)
        #expect(result.landedOn == home)
        #expect(app.tree[home]?.selectedTabEntry?.route == "todos")
        #expect(app.tree[todosWrapper] == nil, "the old tab content was destroyed")
        #expect(app.id("todos", "navigation") != todosWrapper)
        #expect(result.effects.contains(.destroy(instance: todosWrapper, plugin: "todos", type: "navigation")))
        app.checkInvariants()
    }

    @Test("child, parent and top move the chain without changing the tree")
    func movement() throws {
        var app = try App()
        try app.logIn()
        let main = try #require(app.tree.rootID)
        let result = try app.run([.child, .focusFirst("todos"), .child, .parent, .parent, .top])
        #expect(!result.changed)
        #expect(result.landedOn == app.id("todos", "todos"))
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in try app.run([.parent], from: main) }
        expectUnchanged(&app, .notAllowed) { app throws(ResponseError) in
            try app.run([.child], from: app.id("todos", "todos"))
        }
    }

    // MARK: user-driven changes

    @Test("a user dismissal follows the tree and tells the owner with reason user")
    func userDismissed() throws {
        var app = try App()
        let stack = app.id("unauthenticated", "unauthenticated")
        try app.run([.route("forgotPassword")], from: stack)
        let entry = try #require(app.tree[stack]?.entries.first?.id)
        let result = try app.run([.pop(entry)], from: stack, reason: .user)
        #expect(
            result.effects == [
                .dismissed(
                    instance: stack, plugin: "unauthenticated", entry: entry, route: "forgotPassword", reason: .user)
            ])
    }
}

extension InstanceID {
    /// For tests: the instance's parent (or itself at the root).
    fileprivate func parentOr(_ app: App) -> InstanceID { app.tree[self]?.parent?.instance ?? self }
}
