@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

extension App {
    /// Resolves (the dry run) and, if valid, applies a deep link as one chain.
    mutating func open(
        _ url: String, override: ((ChainNeed) -> ChainAnswer?)? = nil,
        custom: ((DeepLinkQuestion) -> Result<CoordinatorDeepLinkRequest.Result, ResponseError>)? = nil
    ) throws(ResponseError) -> ChainResult {
        let plan = try resolve(url, custom: custom)
        let base = tree
        let runner = ChainRunner(
            tree: base, registry: registry, allocator: allocator, start: plan.start, steps: plan.steps,
            links: plan.links)
        let result = try drive(runner, override: override)
        try tree.commit(result, startedFrom: base)
        return result
    }

    func resolve(
        _ url: String, custom: ((DeepLinkQuestion) -> Result<CoordinatorDeepLinkRequest.Result, ResponseError>)? = nil
    ) throws(ResponseError) -> DeepLinkPlan {
        let resolver = DeepLinkResolver(link: try DeepLinkURL(parsing: url), tree: tree, registry: registry)
        while true {
            switch resolver.advance() {
            case .resolved(let plan): return plan
            case .invalid(let error): throw error
            case .needs(let question):
                resolver.resume(with: custom?(question) ?? .failure(ResponseError(.deepLinkInvalid, "no handler")))
            }
        }
    }
}

@Suite("Deep links", .timeLimit(.minutes(1)))
struct DeepLinkTests {
    @Test(
        "URLs split like Coordinator's remainingRoutes: host first, path, query apart",
        arguments: [
            ("switchyard://todos/todo/42", ["todos", "todo", "42"], [String: String]()),
            ("switchyard://todos", ["todos"], [:]),
            ("switchyard://todos/todo/42/", ["todos", "todo", "42"], [:]),
            ("todos/todo/42", ["todos", "todo", "42"], [:]),
            ("/todos//todo", ["todos", "todo"], [:]),
            ("switchyard:///todos/new", ["todos", "new"], [:]),
            (
                "switchyard://todos/todo/a%20b?highlight=yes&x=1+2#frag", ["todos", "todo", "a b"],
                ["highlight": "yes", "x": "1 2"]
            ),
        ])
    func urls(_ text: String, _ segments: [String], _ query: [String: String]) throws {
        let link = try DeepLinkURL(parsing: text)
        #expect(link.segments == segments)
        #expect(link.query == query)
    }

    @Test("bad percent-encoding is an invalid link")
    func badEncoding() {
        #expect(throws: ResponseError.self) { try DeepLinkURL(parsing: "switchyard://todos/%ZZ") }
    }

    @Test("patterns capture, wildcard and take the rest; literals win over captures")
    func patterns() throws {
        let todo = try PathPattern(parsing: "todo/:id")
        #expect(todo.match(["todo", "42", "x"][...])?.consumed == 2)
        #expect(todo.match(["todo", "42"][...])?.captures == ["id": "42"])
        #expect(todo.match(["other", "42"][...]) == nil)
        #expect(try PathPattern(parsing: "files/**path").match(["files", "a", "b"][...])?.captures == ["path": "a/b"])
        #expect(try PathPattern(parsing: "").match(["x"][...])?.consumed == 0)
        #expect(try PathPattern(parsing: "todo/new").rank(consumed: 2) > todo.rank(consumed: 2))
        #expect(try PathPattern(parsing: "todo/:name").shape == todo.shape)
        #expect(throws: PatternError.self) { try PathPattern(parsing: "**/x") }
        #expect(throws: PatternError.self) { try PathPattern(parsing: "a:b") }
    }

    @Test("the Stinsen README deep link: focus the todos tab and route to the todo, through three plugins")
    func stinsenDeepLink() throws {
        var app = try App()
        try app.logIn()
        let plan = try app.resolve("switchyard://todos/todo/42")
        #expect(plan.steps == [.hasRoot("authenticated"), .selectTab("todos"), .child, .route("todo", ["id": "42"])])
        let revision = app.tree.revision
        let result = try app.open("switchyard://todos/todo/42")
        #expect(app.tree.revision == revision + 1)
        #expect(result.landedOn == app.id("todos", "todos"))
        #expect(app.tree[app.id("todos", "todos")]?.entries.map(\.params) == [["id": "42"]])
    }

    @Test("an active root is passed through without its params; setting a root by link validates them")
    func rootParams() throws {
        var app = try App()
        app.loggedIn = true
        try app.run([.setRoot("authenticated", ["user": "alice"])])
        #expect(try app.resolve("switchyard://todos/new").steps.first == .hasRoot("authenticated"))
        do {
            _ = try app.resolve("switchyard://guest")
            Issue.record("a root with a missing required param resolved")
        } catch {
            #expect(error.code == .deepLinkInvalid && error.message.contains("missing required param 'name'"))
        }
    }

    @Test(
        "a link naming the active root passes through it whatever params it carries: the dry run says hasRoot, and the application keeps the root",
        arguments: [
            "switchyard://todos/todo/1?user=bob", "switchyard://todos/todo/1?user=alice", "switchyard://todos/todo/1",
        ])
    func activeRootKept(_ url: String) throws {
        var app = try App()
        app.loggedIn = true
        try app.run([.setRoot("authenticated", ["user": "alice"])])
        let home = app.id("authenticated", "home")
        let plan = try app.resolve(url)
        #expect(plan.steps == [.hasRoot("authenticated"), .selectTab("todos"), .child, .route("todo", ["id": "1"])])
        app.asked = []
        _ = try app.open(url)
        #expect(app.tree.root?.root?.params == ["user": "alice"] && app.id("authenticated", "home") == home)
        #expect(app.asked.map(\.plugin) == ["todos"], "only the todo hop asks a plugin: \(app.asked)")
    }

    @Test("a root whose pattern captures params is kept too when active; another root is set")
    func activeRootWithCaptures() throws {
        var app = try App()
        try app.run([.setRoot("guest", ["name": "ann"])])
        #expect(try app.resolve("switchyard://guest?name=bob").steps == [.hasRoot("guest")])
        #expect(try app.resolve("switchyard://login").steps == [.setRoot("unauthenticated")])
        let revision = app.tree.revision
        let result = try app.open("switchyard://guest?name=bob")
        #expect(!result.changed && app.tree.revision == revision && app.tree.root?.root?.params == ["name": "ann"])
    }

    @Test(
        "two roots that both pass through \"\": the link follows the active one (signed out: forgot; signed in: todos)")
    func activeRootWins() throws {
        var tables = App.tables
        tables[0].coordinators[0].routes[0].deepLink = ""
        var app = try App()
        app.registry = RouteRegistry(tables: tables)
        #expect(
            try app.resolve("switchyard://forgot").steps == [.hasRoot("unauthenticated"), .route("forgotPassword")])
        do {
            _ = try app.resolve("switchyard://todos/todo/1")
            Issue.record("a signed-in link resolved while signed out")
        } catch {
            #expect(
                error.code == .deepLinkInvalid
                    && error.message.contains("no route of unauthenticated.unauthenticated matches"))
        }
        app.loggedIn = true
        try app.run([.setRoot("authenticated", ["user": "alice"])])
        #expect(try app.resolve("switchyard://todos/todo/1").steps.first == .hasRoot("authenticated"))
    }

    @Test("a deep link whose hop is rejected by a guard changes nothing (not logged in)")
    func guardedLink() throws {
        var app = try App()
        #expect(try app.resolve("switchyard://todos/todo/42").steps.first == .setRoot("authenticated"))
        expectUnchanged(&app, .rejectedByGuard) { app throws(ResponseError) in
            _ = try app.open("switchyard://todos/todo/42")
        }
    }

    @Test(
        "the Coordinator README validity check: valid links resolve; invalid ones name the failing segment and change nothing",
        arguments: [
            ("switchyard://todos/new", nil as Int?),
            ("switchyard://profile", nil),
            ("switchyard://projects/p7/members", nil),
            ("switchyard://profile/extra", 1),
            ("switchyard://nowhere", 0),
            ("switchyard://todos/todo", 1),
            ("switchyard://todos/share/abc", 1),
            ("switchyard://todos/todo/1/more", 3),
        ])
    func validity(_ url: String, _ failingIndex: Int?) throws {
        var app = try App()
        try app.logIn()
        do {
            _ = try app.resolve(url)
            #expect(failingIndex == nil, "\(url) should be invalid")
        } catch {
            #expect(error.code == .deepLinkInvalid, "\(error)")
            #expect(error.data?["index"] == failingIndex.map { .int(Int64($0)) }, "\(url): \(error.message)")
            if let index = failingIndex {
                let segments = try DeepLinkURL(parsing: url).segments
                #expect(error.data?["segment"] == (index < segments.count ? .string(segments[index]) : nil))
            }
        }
        if failingIndex != nil {
            expectUnchanged(&app, .deepLinkInvalid) { app throws(ResponseError) in _ = try app.open(url) }
        }
    }

    @Test("query parameters reach the plugins with every hop's link context, and fill declared params")
    func queryReachesPlugins() throws {
        var app = try App()
        try app.logIn()
        app.asked.removeAll()
        _ = try app.open("switchyard://todos/todo/7?highlight=yes&id=ignored")
        let question = try #require(
            app.asked.compactMap { need -> RouteQuestion? in if case .route(let q) = need { q } else { nil } }.first)
        #expect(question.route == "todo")
        #expect(question.params == ["id": "7"], "the path capture wins over the query")
        #expect(question.link?.query == ["highlight": "yes", "id": "ignored"])
        #expect(question.link?.index == 1)
        #expect(question.link?.segments == ["todos", "todo", "7"])
    }

    @Test("a deep link crossing four plugins applies as exactly one revision")
    func fourPlugins() throws {
        var app = try App()
        try app.logIn()
        let revision = app.tree.revision
        let result = try app.open("switchyard://todos/project/p1/members")
        #expect(app.tree.revision == revision + 1)
        let plugins = Set(result.touched.compactMap { app.tree[$0]?.plugin })
        #expect(plugins.isSuperset(of: ["main", "authenticated", "todos", "projects"]))
        let project = try #require(app.instance("projects", "project"))
        #expect(project.entries.map(\.route) == ["members"])
        #expect(app.tree.topCoordinator(from: app.tree.rootID!) == project.id)
    }

    @Test("a deep link whose last hop is rejected leaves the revision unchanged, and created instances are reported")
    func lastHopRejected() throws {
        var app = try App()
        try app.logIn()
        expectUnchanged(&app, .rejectedByGuard) { app throws(ResponseError) in
            _ = try app.open("switchyard://todos/project/p1/members") { need in
                if case .route(let question) = need, question.route == "members" {
                    return .route(.failure(ResponseError(.rejectedByGuard, "members are private")))
                }
                return nil
            }
        }
    }

    @Test("a type with customDeepLinks lets its plugin pick the route (a cursor over the remaining segments)")
    func customHandler() throws {
        var app = try App()
        app.registry.add(
            plugin: "projects",
            coordinators: [
                CoordinatorDeclaration(
                    type: "projects", kind: .stack, initialRoute: "list",
                    routes: [
                        RouteDeclaration(name: "list", transition: .root),
                        RouteDeclaration(
                            name: "project", transition: .push, params: [ParamDeclaration(name: "id", type: .string)],
                            target: CoordinatorReference(type: "project")),
                    ], customDeepLinks: true)
            ])
        try app.logIn()
        var questions: [DeepLinkQuestion] = []
        let plan = try app.resolve("switchyard://projects/by-name/apollo/members") { question in
            questions.append(question)
            guard question.request.segments.first == "by-name", question.request.segments.count >= 2 else {
                return .failure(ResponseError(.deepLinkInvalid, "unknown"))
            }
            return .success(.init(route: "project", params: ["id": .string(question.request.segments[1])], consumed: 2))
        }
        #expect(
            questions.count == 1 && questions[0].request.dryRun
                && questions[0].request.segments == ["by-name", "apollo", "members"])
        #expect(plan.steps.suffix(2) == [.route("project", ["id": "apollo"]), .route("members")])
        #expect(throws: ResponseError.self) {
            try app.resolve("switchyard://projects/nope") { _ in .failure(ResponseError(.deepLinkInvalid, "no")) }
        }
    }
}
