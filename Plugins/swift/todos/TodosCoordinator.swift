import SwitchyardPlugin
import SwitchyardProtocol

/// What a project of the projects plugin is opened with (its `project` type's params): declared, so a composition
/// that would not fit is refused before anything runs (`switchyard contract check`).
nonisolated let projectParams = [ParamDeclaration(name: "id", type: .string)]

/// The todos tab's navigation view (Stinsen's NavigationViewCoordinator around the todos stack).
final class NavigationCoordinator: WrapperCoordinator {
    @Child var content = makeContent
    init() {}
    func makeContent() -> TodosCoordinator { TodosCoordinator() }
}

/// The todos flow (Stinsen README's TodosCoordinator). Its screens are data (TodosScreens.swift): the list's rows
/// open a todo, the todo's buttons complete or share it, the create sheet's form adds one. The todos the user adds
/// and completes are the coordinator's state, so they survive a restart of this plugin.
final class TodosCoordinator: StackCoordinator, StatefulCoordinator, AppearanceObserving {
    nonisolated struct State: Codable, Sendable {
        /// Todos added with the create sheet, oldest first.
        var added: [Todo] = []
        /// Ids of the completed todos.
        var completed: [String] = []
    }

    @Root(actions: [ActionDeclaration(name: "open", params: [todoID]), "create"]) var list = makeList
    @Route(
        .push, deepLink: "todo/:id",
        actions: [
            ActionDeclaration(name: "complete", params: [ParamDeclaration(name: "id", type: .string, required: false)]),
            ActionDeclaration(name: "share", params: [todoID]),
        ])
    var todo = makeTodo
    /// A sheet by default; a chain may present it full screen instead (`.presented(as: .fullScreen)`).
    @Route(
        .modal, deepLink: "new",
        actions: [ActionDeclaration(name: "add", params: [ParamDeclaration(name: "title", type: .string)])],
        also: [.fullScreen], options: PresentationOptions(customTransition: "slideUp"))
    var createTodo = makeCreateTodo
    @Route(.push, target: .coordinator("project", in: "projects", params: projectParams), deepLink: "project/:id")
    var project = makeProject
    @Route(.modal, deepLink: "share/:id") var share = makeShare
    /// Shipped dark, turned on by release 1.1 (`--with-history`, Releases.swift).
    @Route(.push, deepLink: "history") var history = makeHistory

    static var disabledRoutes: Set<String> { TodosRelease.disabledRoutes }

    var state = State()

    init() {}

    /// The list is visible again (a todo popped, a sheet dismissed): where an app would reload it (§12.9).
    func appeared(entry: EntryID) { log("todos: entry \(entry) appeared") }

    /// The screens' buttons and rows (Jump's `onNext`): the coordinator, not the screen, decides what follows.
    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        let id = TodosStore.id(ofEntryParams: action.params)
        switch action.name {
        case "open":
            return id.map { [.route("todo", ["id": .string($0)])] } ?? []
        case "create":
            return [.route("createTodo")]
        case "share":
            return id.map { [.route("share", ["id": .string($0)])] } ?? []
        case "complete":
            if let id, !state.completed.contains(id) { state.completed.append(id) }
            // Back where the user came from, the list drawn again; then, in the same revision, the todos tab's badge
            // (on the tab bar above this flow, another plugin's coordinator) shows how many are still open.
            return [.pop(action.entry), .refresh("list"), .parent, .parent, .setBadge("todos", "\(openCount)")]
        case "add":
            guard case .string(let text)? = action.params?["title"], case let title = TodosStore.trimmed(text),
                !title.isEmpty
            else { throw Rejection("a todo needs a title") }
            state.added.append(Todo(id: "\(100 + state.added.count)", title: title))
            return [.dismiss, .refresh("list"), .parent, .parent, .setBadge("todos", "\(openCount)")]
        default:
            return []
        }
    }
}

/// Sharing a todo: a modal flow of its own, which can pick a project (another plugin's coordinator).
final class ShareCoordinator: StackCoordinator, StatefulCoordinator {
    nonisolated struct State: Codable, Sendable {
        var todo = ""
    }

    @Root(actions: [ActionDeclaration(name: "pick", params: projectParams), "done"]) var share = makeShareScreen
    @Route(.push, target: .coordinator("project", in: "projects", params: projectParams), deepLink: "project/:id")
    var pickProject = makePickProject

    var state = State()

    init() {}

    convenience init(todo: String) {
        self.init()
        state.todo = todo
    }

    /// A project row opens that project in this sheet; Done closes the sheet (this flow leaves its parent's stack).
    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        switch action.name {
        case "pick":
            guard let id = TodosStore.id(ofEntryParams: action.params) else { return [] }
            return [.route("pickProject", ["id": .string(id)])]
        case "done":
            return [.dismissCoordinator]
        default:
            return []
        }
    }
}
