@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// Screens as data (Protocol/README.md §21): the vocabulary, the check against the route's declared actions, the
/// size limits, through the chain as the host and `check-plugin` run it; and the `refresh` step and tab items.
@Suite("screen content", .timeLimit(.minutes(1)))
struct ScreenContentTests {
    /// A todo list's route: rows open a todo, a form adds one.
    static let route = RouteDeclaration(
        name: "list", transition: .root,
        actions: [
            ActionDeclaration(name: "open", params: [ParamDeclaration(name: "id", type: .string)]),
            ActionDeclaration(
                name: "add",
                params: [
                    ParamDeclaration(name: "title", type: .string),
                    ParamDeclaration(name: "urgent", type: .boolean, required: false),
                    ParamDeclaration(name: "list", type: .string, required: false),
                ]),
            ActionDeclaration(name: "refresh"),
        ])

    static func row(_ title: String, action: JSONValue) -> JSONValue {
        ["title": .string(title), "action": action]
    }

    /// Every element type, each interactive one naming a declared action with what it needs.
    static let everything: JSONValue = [
        ["type": "text", "text": "Todos", "style": "title"],
        [
            "type": "list",
            "sections": [
                [
                    "header": "Open",
                    "rows": [
                        row("Buy milk", action: ["name": "open", "params": ["id": "1"]]),
                        ["title": "Ship it", "detail": "done", "badge": "1", "symbol": "checkmark.circle"],
                    ],
                ]
            ],
        ],
        ["type": "textField", "id": "title", "label": "Title", "placeholder": "What to do"],
        ["type": "secureField", "id": "secret"],
        ["type": "toggle", "id": "urgent", "label": "Urgent", "value": false],
        [
            "type": "picker", "id": "list", "label": "List", "value": "home",
            "options": [["value": "home", "title": "Home"], ["value": "work", "title": "Work"]],
        ],
        ["type": "divider"], ["type": "spacer"], ["type": "symbol", "name": "star"],
        [
            "type": "button", "title": "Add", "style": "primary",
            "action": ["name": "add", "inputs": ["title", "urgent", "list"]],
        ],
        ["type": "button", "title": "Reload", "action": ["name": "refresh"]],
    ]

    static func problem(_ content: JSONValue, route: RouteDeclaration = route) -> ScreenContentProblem? {
        ScreenContentCheck.problem(
            in: ScreenDescriptor(name: "TodoList", title: "Todos", content: content), route: route)
    }

    /// `everything` with element `index` replaced.
    static func replacing(_ index: Int, with element: JSONValue) -> JSONValue {
        guard case .array(var elements) = everything else { return everything }
        elements[index] = element
        return .array(elements)
    }

    @Test("every element type, with actions the route declares and the inputs they send, is accepted")
    func accepted() {
        #expect(Self.problem(Self.everything) == nil)
        #expect(Self.problem([]) == nil)
        #expect(ScreenContentCheck.problem(in: ScreenDescriptor(name: "Plain"), route: Self.route) == nil)
    }

    @Test(
        "refusals name the element's path: an undeclared action, an input the screen lacks, params that do not fit",
        arguments: [
            (
                replacing(
                    1,
                    with: [
                        "type": "list", "sections": [["rows": [["title": "x"], row("y", action: ["name": "delete"])]]],
                    ]),
                "content[1].sections[0].rows[1].action.name", "declares no action 'delete'"
            ),
            (
                replacing(9, with: ["type": "button", "title": "Add", "action": ["name": "add", "inputs": ["nope"]]]),
                "content[9].action.inputs[0]", "no input of the screen has the id 'nope'"
            ),
            (
                replacing(9, with: ["type": "button", "title": "Add", "action": ["name": "add"]]),
                "content[9].action", "requires param 'title'"
            ),
            (
                replacing(
                    9, with: ["type": "button", "title": "Add", "action": ["name": "add", "inputs": ["secret"]]]),
                "content[9].action.inputs[0]", "declares no param 'secret'"
            ),
            (
                replacing(
                    9, with: ["type": "button", "title": "Add", "action": ["name": "add", "params": ["title": 7]]]),
                "content[9].action.params.title", "must be string, found number"
            ),
            (
                replacing(2, with: ["type": "toggle", "id": "title", "label": "Title"]),
                "content[9].action.inputs[0]", "input 'title' sends a boolean"
            ),
            (replacing(6, with: ["type": "carousel"]), "content[6].type", "'carousel' is not an element type"),
            (replacing(8, with: ["type": "symbol", "name": "unicorn"]), "content[8].name", "'unicorn' is not one of"),
            (
                replacing(0, with: ["type": "text", "text": "x", "style": "huge"]), "content[0].style",
                "'huge' is not one of"
            ),
            (replacing(3, with: ["type": "secureField", "id": "title"]), "content[3].id", "used twice"),
            (
                replacing(
                    5,
                    with: [
                        "type": "picker", "id": "list", "label": "L", "value": "x",
                        "options": [["value": "a", "title": "A"]],
                    ]),
                "content[5].value", "not the value of one of the options"
            ),
            (replacing(10, with: ["type": "button", "title": "Reload"]), "content[10].action", "missing"),
            (["type": "text"], "content", "must be an array"),
        ] as [(JSONValue, String, String)])
    func refused(content: JSONValue, field: String, reason: String) {
        let problem = Self.problem(content)
        #expect(problem?.field == field, "\(String(describing: problem))")
        #expect(problem?.reason.contains(reason) == true, "\(String(describing: problem))")
        #expect(problem?.limit == nil)
    }

    @Test("content over the element or byte limit is refused naming the limit")
    func limits() {
        let rows = JSONValue.array((0..<ScreenVocabulary.maxElements).map { .object(["title": .string("row \($0)")]) })
        let many: JSONValue = [["type": "list", "sections": [["rows": rows]]]]
        let tooMany = Self.problem(many)
        #expect(tooMany?.limit?.name == "maxScreenElements")
        #expect(tooMany?.limit?.max == ScreenVocabulary.maxElements)
        #expect(tooMany?.field == "content")
        let long = String(repeating: "x", count: ScreenVocabulary.maxContentBytes)
        let large = Self.problem([["type": "text", "text": .string(long)]])
        #expect(large?.limit?.name == "maxScreenContentBytes")
        #expect((large?.limit?.actual ?? 0) > ScreenVocabulary.maxContentBytes)
    }

    // MARK: - Through the chain

    /// The demo-shaped app whose `todos.todo` answers with `content`.
    static func answering(_ content: JSONValue) -> (ChainNeed) -> ChainAnswer? {
        { need in
            guard case .route(let question) = need, question.route == "todo" else { return nil }
            return .route(.success(.init(content: .screen(ScreenDescriptor(name: "Todo", content: content)))))
        }
    }

    @Test(
        "a plugin's screen naming an undeclared action fails the chain with invalidAnswer naming the element; the tree stays"
    )
    func chainRefusesContent() throws {
        var app = try App()
        try app.logIn()
        let before = app.tree
        let todos = app.id("todos", "todos")
        let content: JSONValue = [["type": "button", "title": "Complete", "action": ["name": "complete"]]]
        let failure = app.failure(
            of: ChainRunner(
                tree: app.tree, registry: app.registry, allocator: app.allocator, start: todos,
                steps: [.route("todo", ["id": "42"])]),
            override: Self.answering(content))
        let error = try #require(failure?.error)
        #expect(error.code == .invalidAnswer)
        #expect(error.data?["field"] == "content[0].action.name")
        #expect(error.data?["route"] == "todo")
        #expect(error.data?["plugin"] == "todos")
        #expect(error.message.contains("declares no action 'complete'"))
        #expect(app.tree == before)
    }

    @Test("a plugin's screen over the size limit fails the chain with limitExceeded naming the limit")
    func chainRefusesLargeContent() throws {
        var app = try App()
        try app.logIn()
        let text = String(repeating: "y", count: ScreenVocabulary.maxContentBytes + 1)
        let failure = app.failure(
            of: ChainRunner(
                tree: app.tree, registry: app.registry, allocator: app.allocator, start: app.id("todos", "todos"),
                steps: [.route("todo", ["id": "42"])]),
            override: Self.answering([["type": "text", "text": .string(text)]]))
        let error = try #require(failure?.error)
        #expect(error.code == .limitExceeded)
        #expect(error.data?["limit"] == "maxScreenContentBytes")
        #expect(error.data?["max"] == .int(Int64(ScreenVocabulary.maxContentBytes)))
        #expect(error.data?["field"] == "content")
    }

    @Test("a screen's title and content land in the tree and its snapshot as the plugin answered them")
    func contentInTheTree() throws {
        var app = try App()
        try app.logIn()
        let content: JSONValue = [["type": "text", "text": "Answer everything", "style": "title"]]
        try app.run(
            [.route("todo", ["id": "42"])], from: app.id("todos", "todos"),
            override: { need in
                guard case .route(let question) = need, question.route == "todo" else { return nil }
                return .route(
                    .success(
                        .init(content: .screen(ScreenDescriptor(name: "Todo", title: "Todo 42", content: content)))))
            })
        let entry = try #require(app.tree.snapshot().instances.first { $0.type == "todos" }?.entries?.last)
        #expect(entry.content == .screen(ScreenDescriptor(name: "Todo", title: "Todo 42", content: content)))
        #expect(app.snapshotJSON.contains(#""title":"Todo 42","content":[{"type":"text""#))
    }

    // MARK: - refresh

    @Test("refresh asks the owner again with the entry's route, params and transition, and shows the answer in place")
    func refresh() throws {
        var app = try App()
        try app.logIn()
        let todos = app.id("todos", "todos")
        try app.run([.route("todo", ["id": "42"]), .route("createTodo")], from: todos)
        let before = try #require(app.tree[todos])
        let todo = try #require(before.entries.first)
        var version = 1
        let answer: (ChainNeed) -> ChainAnswer? = { need in
            guard case .route(let question) = need else { return nil }
            return .route(
                .success(
                    .init(
                        content: .screen(
                            ScreenDescriptor(name: question.route, props: ["version": .int(Int64(version))])))))
        }
        app.asked = []
        let result = try app.run([.refresh(entry: todo.id)], from: todos, override: answer)
        guard case .route(let question)? = app.asked.first else {
            Issue.record("refresh asked nothing")
            return
        }
        #expect(question.route == "todo")
        #expect(question.params == ["id": "42"])
        #expect(question.transition == .push)
        let after = try #require(app.tree[todos])
        #expect(after.entries.map(\.id) == before.entries.map(\.id))
        #expect(after.entries.first?.content == .screen(ScreenDescriptor(name: "todo", props: ["version": 1])))
        #expect(result.landedOn == todos)
        #expect(result.effects.isEmpty, "a refresh removes nothing: \(result.effects)")

        // By route: the top-most entry of it, here the root.
        version = 2
        try app.run([.refresh("list")], from: todos, override: answer)
        #expect(app.tree[todos]?.root?.content == .screen(ScreenDescriptor(name: "list", props: ["version": 2])))
        app.checkInvariants()
    }

    @Test("refresh refuses what it cannot do: an entry holding a coordinator, another plugin's instance, nothing named")
    func refreshRefusals() throws {
        var app = try App()
        try app.logIn()
        let home = app.id("authenticated", "home")
        let tab = try #require(app.tree[home]?.tabs.first)
        #expect(throws: ResponseError.self) { try app.run([.refresh(entry: tab.id)], from: home) }
        do {
            try app.run([.refresh(entry: tab.id)], from: home)
        } catch {
            #expect(error.code == .notAllowed)
            #expect(error.data?["entry"] == .int(tab.id.rawValue))
        }
        let todos = app.id("todos", "todos")
        do {
            try app.run([.refresh("list")], from: todos, as: .plugin("projects"))
            Issue.record("another plugin refreshed todos' list")
        } catch { #expect(error.code == .notOwner) }
        do {
            try app.run([NavigationStep(op: .refresh)], from: todos)
            Issue.record("a refresh without entry or route was applied")
        } catch {
            #expect(error.code == .invalidParams)
            #expect(error.data?["field"] == "steps[0].route")
        }
        do {
            try app.run([.refresh("todo")], from: todos)
            Issue.record("a refresh of a route with no entry was applied")
        } catch { #expect(error.code == .routeNotFound) }
    }

    // MARK: - Tab items

    @Test(
        "a tab item's badge is the tab entry's badge at creation; composition refuses tab items off tabs and unknown symbols"
    )
    func tabItems() throws {
        var tables = App.tables
        let home = try #require(tables.firstIndex { $0.plugin == "authenticated" })
        tables[home].coordinators[0].routes[1].tabItem = TabItem(title: "Projects", symbol: "folder", badge: "3")
        var app = try App()
        app.registry = RouteRegistry(tables: tables)
        try app.logIn()
        let tabs = try #require(app.tree[app.id("authenticated", "home")]?.tabs)
        #expect(tabs.map(\.badge) == [nil, "3", nil])

        var broken = tables
        broken[home].coordinators[0].routes[0].tabItem = TabItem(title: "", symbol: "unicorn")
        let main = try #require(broken.firstIndex { $0.plugin == "main" })
        broken[main].coordinators[0].routes[3].tabItem = TabItem(title: "About")
        let issues = Composition.check(tables: broken, declaredPlugins: broken.map(\.plugin), root: nil).issues
        let reasons = issues.map(\.reason)
        #expect(reasons.contains { $0.contains("empty title") })
        #expect(reasons.contains { $0.contains("'unicorn' is not one of the documented symbols") })
        #expect(reasons.contains { $0.contains("only a tab route has one") })
    }
}
