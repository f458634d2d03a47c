import SwitchyardPlugin
import SwitchyardProtocol

/// The todos tab's navigation view (Stinsen's NavigationViewCoordinator around the todos stack).
final class NavigationCoordinator: WrapperCoordinator {
    @Child var content = makeContent
    init() {}
    func makeContent() -> TodosCoordinator { TodosCoordinator() }
}

/// The todos flow (Stinsen README's TodosCoordinator).
final class TodosCoordinator: StackCoordinator {
    @Root var list = makeList
    @Route(.push, deepLink: "todo/:id") var todo = makeTodo
    @Route(.modal, deepLink: "new") var createTodo = makeCreateTodo
    @Route(.push, target: .coordinator("project", in: "projects"), deepLink: "project/:id") var project = makeProject
    @Route(.modal, deepLink: "share/:id") var share = makeShare

    init() {}
}

/// Sharing a todo: a modal flow of its own, which can pick a project (another plugin's coordinator).
final class ShareCoordinator: StackCoordinator, StatefulCoordinator {
    nonisolated struct State: Codable, Sendable {
        var todo = ""
    }

    @Root var share = makeShareScreen
    @Route(.push, target: .coordinator("project", in: "projects"), deepLink: "project/:id") var pickProject = makePickProject

    var state = State()

    init() {}

    convenience init(todo: String) {
        self.init()
        state.todo = todo
    }
}
