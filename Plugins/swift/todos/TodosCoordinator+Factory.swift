import SwitchyardPlugin
import SwitchyardProtocol

extension TodosCoordinator {
    /// Every todo: the demo's own, then the ones the user added.
    var todos: [Todo] { TodosStore.builtIn + state.added }
    /// How many todos are not done: the todos tab's badge.
    var openCount: Int { todos.filter { !state.completed.contains($0.id) }.count }

    func todo(_ id: String) -> Todo? { todos.first { $0.id == id } }

    func makeList() -> Screen {
        listScreen(open: todos.filter { !state.completed.contains($0.id) }, done: todos.filter(isDone))
    }

    func makeTodo(_ id: String) throws -> Screen {
        TodosRelease.crashIfAsked()
        // Plugin code prints: the SDK keeps stdout for the protocol, so this goes to the host log.
        print("opening todo \(id)")
        guard let todo = todo(id) else { throw Rejection("there is no todo '\(id)'") }
        return todoScreen(todo, done: isDone(todo))
    }

    func makeCreateTodo() -> Screen { createScreen() }

    func makeProject(_ id: String) -> PluginCoordinator { PluginCoordinator(["id": .string(id)]) }

    func makeShare(_ id: String) throws -> ShareCoordinator {
        guard todo(id) != nil else { throw Rejection("there is no todo '\(id)'") }
        return ShareCoordinator(todo: id)
    }

    private func isDone(_ todo: Todo) -> Bool { state.completed.contains(todo.id) }
}

extension ShareCoordinator {
    func makeShareScreen() -> Screen { shareScreen() }
    func makePickProject(_ id: String) -> PluginCoordinator { PluginCoordinator(["id": .string(id)]) }
}

/// A todo: its id (what links and actions carry) and its title.
nonisolated struct Todo: Codable, Sendable, Equatable {
    var id: String
    var title: String
}

/// A todo's id, as the todo route and the actions declare it.
nonisolated let todoID = ParamDeclaration(name: "id", type: .string)

/// The todos every instance starts with.
enum TodosStore {
    static let builtIn = [
        Todo(id: "1", title: "Buy milk"), Todo(id: "7", title: "Write the spec"),
        Todo(id: "42", title: "Answer everything"), Todo(id: "99", title: "Ship it"),
    ]

    static func id(ofEntryParams params: JSONValue?) -> String? {
        if case .string(let id)? = params?["id"] { return id }
        return nil
    }

    /// `text` without the spaces around it (a form's field as the user typed it).
    static func trimmed(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
