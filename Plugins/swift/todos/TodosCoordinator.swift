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

/// The todos flow (Stinsen README's TodosCoordinator).
final class TodosCoordinator: StackCoordinator, AppearanceObserving {
    @Root var list = makeList
    @Route(
        .push, deepLink: "todo/:id",
        actions: [
            ActionDeclaration(name: "complete", params: [ParamDeclaration(name: "id", type: .string, required: false)])
        ])
    var todo = makeTodo
    /// A sheet by default; a chain may present it full screen instead (`.presented(as: .fullScreen)`).
    @Route(.modal, deepLink: "new", also: [.fullScreen], options: PresentationOptions(customTransition: "slideUp"))
    var createTodo = makeCreateTodo
    @Route(.push, target: .coordinator("project", in: "projects", params: projectParams), deepLink: "project/:id")
    var project = makeProject
    @Route(.modal, deepLink: "share/:id") var share = makeShare
    /// Shipped dark, turned on by release 1.1 (`--with-history`, Releases.swift).
    @Route(.push, deepLink: "history") var history = makeHistory

    static var disabledRoutes: Set<String> { TodosRelease.disabledRoutes }

    init() {}

    /// The list is visible again (a todo popped, a sheet dismissed): where an app would reload it (§12.9).
    func appeared(entry: EntryID) { log("todos: entry \(entry) appeared") }

    /// The todo screen's "complete" button (Jump's `onNext`): the coordinator, not the screen, decides what follows,
    /// and here that is going back to where the user came from.
    func action(_ action: ScreenAction) throws -> [NavigationStep] {
        guard action.name == "complete" else { return [] }
        if let id = TodosStore.id(ofEntryParams: action.params) { TodosStore.completed.insert(id) }
        // Back where the user came from; then, in the same revision, the todos tab's badge (on the tab bar above
        // this flow, another plugin's coordinator) shows how many are still open.
        return [.pop(action.entry), .parent, .parent, .setBadge("todos", "\(TodosStore.open)")]
    }
}

/// Sharing a todo: a modal flow of its own, which can pick a project (another plugin's coordinator).
final class ShareCoordinator: StackCoordinator, StatefulCoordinator {
    nonisolated struct State: Codable, Sendable {
        var todo = ""
    }

    @Root var share = makeShareScreen
    @Route(.push, target: .coordinator("project", in: "projects", params: projectParams), deepLink: "project/:id")
    var pickProject = makePickProject

    var state = State()

    init() {}

    convenience init(todo: String) {
        self.init()
        state.todo = todo
    }
}
