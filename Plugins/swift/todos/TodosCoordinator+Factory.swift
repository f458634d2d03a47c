import SwitchyardPlugin
import SwitchyardProtocol

extension TodosCoordinator {
    func makeList() -> Screen { Screen("TodoList", ["count": .int(Int64(TodosStore.todos.count))]) }

    func makeTodo(_ id: String) throws -> Screen {
        TodosRelease.crashIfAsked()
        // Plugin code prints: the SDK keeps stdout for the protocol, so this goes to the host log.
        print("opening todo \(id)")
        guard let title = TodosStore.todos[id] else { throw Rejection("there is no todo '\(id)'") }
        return Screen("Todo", ["id": .string(id), "title": .string(title)])
    }

    func makeCreateTodo() -> Screen { Screen("CreateTodo") }

    func makeProject(_ id: String) -> PluginCoordinator { PluginCoordinator(["id": .string(id)]) }

    func makeShare(_ id: String) throws -> ShareCoordinator {
        guard TodosStore.todos[id] != nil else { throw Rejection("there is no todo '\(id)'") }
        return ShareCoordinator(todo: id)
    }
}

extension ShareCoordinator {
    func makeShareScreen() -> Screen { Screen("Share", ["todo": .string(state.todo)]) }
    func makePickProject(_ id: String) -> PluginCoordinator { PluginCoordinator(["id": .string(id)]) }
}

/// The todos this demo knows, and which are done.
@MainActor
enum TodosStore {
    static let todos: [String: String] = [
        "1": "Buy milk", "7": "Write the spec", "42": "Answer everything", "99": "Ship it",
    ]
    static var completed = Set<String>()
    /// How many todos are not done: the todos tab's badge.
    static var open: Int { todos.keys.filter { !completed.contains($0) }.count }

    static func id(ofEntryParams params: JSONValue?) -> String? {
        if case .string(let id)? = params?["id"] { return id }
        return nil
    }
}
