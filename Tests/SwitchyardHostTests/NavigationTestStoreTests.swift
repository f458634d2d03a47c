import DemoAuthenticatedPlugin
import DemoMainPlugin
import DemoTodosPlugin
import InProcessDemo
import SwitchyardPlugin
import SwitchyardPluginTesting
import SwitchyardProtocol
import Synchronization
import Testing

/// `NavigationTestStore`, as a plugin author uses it: each demo Swift plugin tested exhaustively, every change of the
/// composed tree and every notification asserted; and what a test that forgets one sees.
@Suite("The navigation test store", .timeLimit(.minutes(1)))
@MainActor
struct NavigationTestStoreTests {
    static let todosRoot = CoordinatorReference(plugin: "todos", type: "navigation")

    /// A screen as the tree holds it: written with the SDK's builders, as the plugin writes it.
    static func shown(_ screen: Screen) -> ContentSnapshot {
        .screen(ScreenDescriptor(name: screen.name, props: screen.props, title: screen.title, content: screen.content))
    }

    @Test(
        "todos: a todo opened and dismissed by the user (its owner hears both), a route its table lacks refused"
    )
    func todos() async throws {
        let store = try await NavigationTestStore([todosPlugin], root: Self.todosRoot, absent: ["projects"])
        let todos = try #require(store.tree.find("todos", "todos"))
        let list = try #require(todos.root?.entry)
        let opened = try await store.send(.navigate(from: todos.id, [.route("todo", ["id": "7"])])) { tree in
            tree[todos.id]?.entries = [
                EntrySnapshot(
                    entry: EntryID(list.rawValue + 1), route: "todo", transition: .push, params: ["id": "7"],
                    content: Self.shown(
                        Screen("Todo", title: "Write the spec", ["id": "7", "title": "Write the spec"]) {
                            Text("Write the spec").font(.title)
                            Text("Open").font(.caption)
                            Divider()
                            Button(
                                "Complete", style: .primary, symbol: "checkmark.circle", action: "complete",
                                params: ["id": "7"])
                            Button("Share", symbol: "square.and.arrow.up", action: "share", params: ["id": "7"])
                        }))
            ]
        }
        #expect(opened.instance == todos.id)
        // The user goes back: the owner hears it, and the list is on top again.
        try await store.send(.dismiss(instance: todos.id, entry: EntryID(list.rawValue + 1))) { tree in
            tree[todos.id]?.entries = []
        }
        store.receive(
            .dismissed("todos", instance: todos.id, entry: EntryID(list.rawValue + 1), route: "todo", reason: .user))
        store.receive(.appeared("todos", instance: todos.id, entry: list))
        // A route the table does not have is refused, and nothing changes.
        let refusal = await store.sendRefused(.navigate(from: todos.id, [.route("nowhere")]))
        #expect(refusal?.code == .routeNotFound)
        await store.finish()
    }

    @Test(
        "main: the guard refuses a locked account and leaves the tree as it was; the about sheet opens and the user dismisses it"
    )
    func main() async throws {
        let store = try await NavigationTestStore(
            [mainPlugin, try #require(InProcessDemo.plugins["unauthenticated"])],
            root: CoordinatorReference(plugin: "main", type: "main"), absent: ["authenticated"])
        let main = try #require(store.tree.find("main", "main"))
        #expect(store.tree.find("unauthenticated", "unauthenticated") != nil)
        let refused = await store.sendRefused(.navigate([.setRoot("authenticated", ["user": "mallory"])]))
        #expect(refused?.code == .rejectedByGuard)
        let sheet = EntryID((main.root?.entry.rawValue ?? 0) + 2)
        try await store.send(.navigate([.route("about")])) { tree in
            tree[main.id]?.entries = [
                EntrySnapshot(
                    entry: sheet, route: "about", transition: .modal,
                    content: Self.shown(
                        Screen("About", title: "About", ["version": "1.0.0"]) {
                            Image(systemName: "info.circle")
                            Text("Switchyard demo").font(.title)
                            Text(
                                "Version 1.0.0: six coordinator plugins in Swift, Python and Node, one navigation tree."
                            )
                        }))
            ]
        }
        try await store.send(.dismiss(instance: main.id, entry: sheet)) { tree in tree[main.id]?.entries = [] }
        store.receive(.dismissed("main", instance: main.id, entry: sheet, route: "about", reason: .user))
        await store.finish()
    }

    @Test("authenticated: tabs selected and re-tapped, each selection heard by the tab bar's owner")
    func authenticated() async throws {
        let store = try await NavigationTestStore(
            [
                authenticatedPlugin, todosPlugin, try #require(InProcessDemo.plugins["projects"]),
                try #require(InProcessDemo.plugins["profile"]),
            ],
            root: CoordinatorReference(plugin: "authenticated", type: "home"))
        let home = try #require(store.tree.find("authenticated", "home"))
        // Appearance of the first tab's list was heard when the tree was built; nothing else yet.
        store.exhaustivity = .off
        try await store.send(.navigate(from: home.id, [.selectTab("projects")])) { tree in
            tree[home.id]?.selectedTab = "projects"
        }
        store.exhaustivity = .on
        store.receive(.tabSelected("authenticated", instance: home.id, tab: "projects"))
        try await store.send(.navigate(from: home.id, [.selectTab("projects")]))
        store.receive(.tabSelected("authenticated", instance: home.id, tab: "projects", isRepeat: true))
        await store.finish()
    }

    @Test("a test that does not assert a change fails, and the failure shows the difference line by line")
    func unassertedChangeFails() async throws {
        let store = try await NavigationTestStore([todosPlugin], root: Self.todosRoot, absent: ["projects"])
        let todos = try #require(store.tree.find("todos", "todos"))
        let recorded = RecordedIssues()
        try await withKnownIssue {
            try await store.send(.navigate(from: todos.id, [.route("todo", ["id": "42"])]))
        } matching: { issue in
            recorded.append(issue)
        }
        let message = try #require(recorded.messages.first)
        #expect(
            message.contains("the tree after navigate from #\(todos.id.rawValue): route todo {\"id\":\"42\"}"),
            "\(message)")
        #expect(message.contains("is not what the test expected (− expected, + actual)"))
        // The stack's entries were expected empty; the host pushed the todo.
        #expect(message.contains(#"−       "entries": []"#), "\(message)")
        #expect(message.contains(#"+           "route": "todo","#), "\(message)")
        #expect(message.contains(#"+                 "title": "Answer everything""#), "\(message)")
        store.exhaustivity = .off
        await store.finish()
    }

    @Test("a notification nobody asserted fails the next step; off, the store lets it go")
    func unassertedNotificationFails() async throws {
        let store = try await NavigationTestStore([todosPlugin], root: Self.todosRoot, absent: ["projects"])
        let todos = try #require(store.tree.find("todos", "todos"))
        let list = try #require(todos.root?.entry)
        try await store.send(.navigate(from: todos.id, [.route("createTodo")])) { tree in
            tree[todos.id]?.entries = [
                EntrySnapshot(
                    entry: EntryID(list.rawValue + 1), route: "createTodo", transition: .modal,
                    content: Self.shown(
                        Screen("CreateTodo", title: "New todo") {
                            TextField("Title", id: "title", prompt: "What needs doing?")
                            Button("Add", style: .primary, symbol: "plus", action: "add", inputs: ["title"])
                        }),
                    presentation: PresentationOptions(customTransition: "slideUp"))
            ]
        }
        try await store.send(.navigate(from: todos.id, [.dismiss])) { tree in tree[todos.id]?.entries = [] }
        let recorded = RecordedIssues()
        await withKnownIssue {
            await store.finish()
        } matching: { issue in
            recorded.append(issue)
        }
        let message = try #require(recorded.messages.first)
        #expect(message.contains("notification(s) were not asserted before the end of the test"))
        #expect(message.contains("coordinator/dismissed"), "\(message)")
    }
}

/// What a known issue said, kept from the matcher (which runs where the issue is recorded).
private final class RecordedIssues: Sendable {
    private let comments = Mutex<[String]>([])

    /// Keeps `issue`'s comments; matches every issue.
    func append(_ issue: Issue) -> Bool {
        comments.withLock { $0.append(issue.comments.map(\.rawValue).joined()) }
        return true
    }

    var messages: [String] { comments.withLock { $0 } }
}
