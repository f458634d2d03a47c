import SwitchyardPlugin
import SwitchyardProtocol

// The todos flow's screens as data (Protocol/README.md §21), built as SwiftUI views are. Each row and button names an
// action its route declares; the coordinator's `action(_:)` decides what a tap does. Each keeps the name and props
// a shell without a renderer for data (and `switchyard tree`) shows.

extension TodosCoordinator {
    func listScreen(open: [Todo], done: [Todo]) -> Screen {
        Screen("TodoList", title: "Todos", ["count": .int(Int64(todos.count))]) {
            List {
                Section(open.isEmpty ? "Nothing to do" : "Open") {
                    ForEach(open) { Row($0.title).symbol("circle").action("open", ["id": $0.id]) }
                }
                if !done.isEmpty {
                    Section("Done") {
                        ForEach(done) { Row($0.title).symbol("checkmark.circle").action("open", ["id": $0.id]) }
                    }
                }
            }
            Button("New todo", style: .primary, symbol: "plus", action: "create")
        }
    }

    func todoScreen(_ todo: Todo, done: Bool) -> Screen {
        Screen("Todo", title: todo.title, ["id": .string(todo.id), "title": .string(todo.title)]) {
            Text(todo.title).font(.title)
            Text(done ? "Done" : "Open").font(.caption)
            Divider()
            if !done {
                // The todo's id goes with the tap: the user is asked for nothing.
                Button(
                    "Complete", style: .primary, symbol: "checkmark.circle", action: "complete", params: ["id": todo.id]
                )
            }
            Button("Share", symbol: "square.and.arrow.up", action: "share", params: ["id": todo.id])
        }
    }

    func createScreen() -> Screen {
        Screen("CreateTodo", title: "New todo") {
            TextField("Title", id: "title", prompt: "What needs doing?")
            Button("Add", style: .primary, symbol: "plus", action: "add", inputs: ["title"])
        }
    }
}

extension ShareCoordinator {
    /// The projects a todo can be shared to (the projects plugin's, by id).
    static let projects = [("p1", "Apollo"), ("p7", "Voyager")]

    func shareScreen() -> Screen {
        Screen("Share", title: "Share", ["todo": .string(state.todo)]) {
            Text("Send todo \(state.todo) to a project")
            List {
                Section("Projects") {
                    ForEach(Self.projects) { Row($0.1).symbol("folder").action("pick", ["id": $0.0]) }
                }
            }
            Button("Done", action: "done")
        }
    }
}
