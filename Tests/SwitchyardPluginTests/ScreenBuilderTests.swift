import SwitchyardPlugin
import SwitchyardPluginTesting
import Testing

// Screens as data in the Swift SDK (Protocol/README.md §21): a result builder in SwiftUI's style, and tab items.

extension ActionName {
    static let open: ActionName = "open"
}

final class Library: StackCoordinator {
    nonisolated struct Book: Sendable {
        let id: String
        let title: String
        let read: Bool
    }

    static let books = [Book(id: "b1", title: "Dune", read: true), Book(id: "b2", title: "Emma", read: false)]

    @Root(actions: [ActionDeclaration(name: "open", params: [ParamDeclaration(name: "id", type: .string)]), "add"])
    var shelf = makeShelf

    init() {}

    func makeShelf() -> Screen {
        Screen("Shelf", title: "Books", ["count": .int(Int64(Self.books.count))]) {
            Text("Your books").font(.title)
            List {
                ForEach(Self.books) { Row($0.title).action(.open, ["id": $0.id]) }
                Section("Read", footer: "Finished ones") {
                    ForEach(Self.books.filter(\.read)) {
                        Row($0.title, detail: "done").symbol("checkmark").disclosure(false)
                    }
                }
            }
            if Self.books.count > 1 { Divider() }
            TextField("Title", id: "title", prompt: "A book")
            Toggle("Signed", id: "signed", isOn: true)
            Picker(
                "Shelf", id: "where", selection: "top",
                options: [PickerOption("top", "Top"), PickerOption("low", "Low")])
            SecureField("Code", id: "code")
            Button("Add", style: .primary, symbol: "plus", action: "add", inputs: ["title", "signed"])
            Spacer()
            Image(systemName: "star")
        }
    }
}

final class Reader: TabsCoordinator {
    @Tab(tabItem: TabItem("Books", symbol: "doc.text", badge: "2")) var books = makeBooks
    @Tab var about = makeAbout
    init() {}
    func makeBooks() -> Screen { Screen("Books") }
    func makeAbout() -> Screen { Screen("About") }
}

@Suite("Swift SDK: screens as data", .timeLimit(.minutes(1)))
struct ScreenBuilderTests {
    let connection = PluginTestConnection(Plugin("library", coordinators: [Library.self, Reader.self]))

    @Test("the builder writes the vocabulary's JSON: rows outside a section make one, modifiers, inputs, styles")
    func builderJSON() async throws {
        let created = try await connection.create(.init(instance: InstanceID(1), type: "library", reason: .new))
        guard case .screen(let screen)? = created.root?.content else {
            Issue.record("no screen: \(String(describing: created.root))")
            return
        }
        #expect(screen.name == "Shelf")
        #expect(screen.title == "Books")
        #expect(screen.props == ["count": 2])
        let expected: JSONValue = [
            ["type": "text", "text": "Your books", "style": "title"],
            [
                "type": "list",
                "sections": [
                    [
                        "rows": [
                            ["title": "Dune", "action": ["name": "open", "params": ["id": "b1"]]],
                            ["title": "Emma", "action": ["name": "open", "params": ["id": "b2"]]],
                        ]
                    ],
                    [
                        "header": "Read", "footer": "Finished ones",
                        "rows": [["title": "Dune", "detail": "done", "symbol": "checkmark", "disclosure": false]],
                    ],
                ],
            ],
            ["type": "divider"],
            ["type": "textField", "id": "title", "label": "Title", "placeholder": "A book"],
            ["type": "toggle", "id": "signed", "label": "Signed", "value": true],
            [
                "type": "picker", "id": "where", "label": "Shelf",
                "options": [["value": "top", "title": "Top"], ["value": "low", "title": "Low"]], "value": "top",
            ],
            ["type": "secureField", "id": "code", "label": "Code"],
            [
                "type": "button", "title": "Add", "style": "primary", "symbol": "plus",
                "action": ["name": "add", "inputs": ["title", "signed"]],
            ],
            ["type": "spacer"],
            ["type": "symbol", "name": "star"],
        ]
        #expect(screen.content == expected)
    }

    @Test("@Tab(tabItem:) declares the tab bar's title, symbol and starting badge; a tab without one declares none")
    func tabItems() async throws {
        let declarations = try await connection.initialize().coordinators
        let reader = try #require(declarations.first { $0.type == "reader" })
        #expect(reader.route(named: "books")?.tabItem == TabItem(title: "Books", symbol: "doc.text", badge: "2"))
        #expect(reader.route(named: "about")?.tabItem == nil)
    }
}
