@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

@Suite("Contract documents (§19.1)", .timeLimit(.minutes(1)))
struct ContractFormatTests {
    static let info = PluginInfo(name: "todos", version: "1.2.0")
    static var todos: [CoordinatorDeclaration] { App.tables.first { $0.plugin == "todos" }?.coordinators ?? [] }

    @Test(
        "the same table gives the same bytes whatever the order of its declarations, and reads back to the same contract"
    )
    func deterministic() throws {
        var shuffled = Self.todos.reversed().map { declaration in
            var copy = declaration
            copy.routes.reverse()
            return copy
        }
        shuffled[0].routes = shuffled[0].routes.map { route in
            var copy = route
            copy.params?.reverse()
            return copy
        }
        let bytes = RouteContract(plugin: Self.info, protocolVersion: 1, coordinators: Self.todos).encoded()
        #expect(RouteContract(plugin: Self.info, protocolVersion: 1, coordinators: shuffled).encoded() == bytes)
        #expect(bytes.last == 0x0A)
        let read = try RouteContract(parsing: bytes)
        #expect(read.encoded() == bytes)
        #expect(read == RouteContract(plugin: Self.info, protocolVersion: 1, coordinators: Self.todos))
    }

    @Test("the document: sorted keys, two-space indentation, required spelled out, references derived from the targets")
    func document() throws {
        let text = String(
            decoding: RouteContract(plugin: Self.info, protocolVersion: 1, coordinators: Self.todos).encoded(),
            as: UTF8.self)
        #expect(
            text.hasPrefix(
                """
                {
                  "contractVersion": 1,
                  "plugin": {
                    "name": "todos",
                    "version": "1.2.0"
                  },
                  "protocolVersion": 1,
                  "references": {
                    "projects": {
                      "project": ["/types/todos/routes/project"]
                    }
                  },
                  "types": {
                    "navigation": {
                      "kind": "wrapper",
                """))
        #expect(
            text.contains(
                """
                        "todo": {
                          "deepLink": "todo/:id",
                          "params": {
                            "id": {
                              "required": true,
                              "type": "string"
                            }
                          },
                          "transition": "push"
                        }
                """))
    }

    @Test("converted back, a contract composes exactly as the route table it was made from")
    func roundTripComposition() {
        let contracts = App.tables.map {
            RouteContract(
                plugin: PluginInfo(name: $0.plugin, version: "1"), protocolVersion: 1, coordinators: $0.coordinators)
        }
        let root = RouteRegistry.TypeKey(plugin: "main", type: "main")
        let fromTables = Composition.check(tables: App.tables, declaredPlugins: App.tables.map(\.plugin), root: root)
        let fromContracts = Composition.check(
            tables: contracts.map { ($0.plugin.name, $0.coordinators) }, declaredPlugins: App.tables.map(\.plugin),
            root: root)
        #expect(fromTables.issues == fromContracts.issues)
        for (plugin, coordinators) in App.tables {
            let contract = contracts.first { $0.plugin.name == plugin }
            for declaration in coordinators {
                let back = contract?.coordinators.first { $0.type == declaration.type }
                #expect(back?.kind == declaration.kind && back?.initialRoute == declaration.initialRoute)
                #expect(Set(back?.routes.map(\.name) ?? []) == Set(declaration.routes.map(\.name)))
                // Tabs keep their order: it is the tab bar's.
                #expect(
                    back?.routes.filter { $0.transition == .tab }.map(\.name)
                        == declaration.routes.filter { $0.transition == .tab }.map(\.name))
            }
        }
    }

    @Test(
        "a file that is not a contract is refused naming the member, its line and column",
        arguments: [
            (
                #"{"contractVersion": 1, "plugin": {"name": "x", "version": "1"}, "protocolVersion": 1, "types": {}, "extra": 1}"#,
                "/extra", "unknown member 'extra'"
            ),
            (
                #"{"contractVersion": 2, "plugin": {"name": "x", "version": "1"}, "protocolVersion": 1, "types": {}}"#,
                "/contractVersion", "this switchyard reads format 1"
            ),
            (
                "{\n  \"contractVersion\": 1,\n  \"plugin\": {\"name\": \"x\", \"version\": \"1\"},\n  \"protocolVersion\": 1,\n  \"types\": {\"a\": {\"kind\": \"stak\", \"routes\": {}}}\n}",
                "/types/a/kind", "'stak' is not one of"
            ),
            (
                #"{"contractVersion": 1, "plugin": {"name": "x", "version": "1"}, "protocolVersion": 1, "types": {"a": {"kind": "stack", "routes": {"r": {"transition": "push", "deepLink": "**/x"}}}}}"#,
                "/types/a/routes/r/deepLink", "must be the last"
            ),
            (
                #"{"contractVersion": 1, "plugin": {"name": "x", "version": "1"}, "protocolVersion": 1, "types": {"a b": {"kind": "stack", "routes": {}}}}"#,
                "/types/a b", "is not a name"
            ),
            (
                #"{"contractVersion": 1, "plugin": {"name": "x", "version": "1"}, "protocolVersion": 1, "types": {"a": {"kind": "tabs", "routes": {"t": {"transition": "tab"}}, "tabs": []}}}"#,
                "/types/a/tabs", "must list the type's tab routes"
            ),
            (
                #"{"contractVersion": 1, "plugin": {"name": "x", "version": "1"}, "protocolVersion": 1, "types": {"a": {"kind": "stack", "routes": {"r": {"transition": "push", "params": {"id": {"type": "string"}}}}}}}"#,
                "/types/a/routes/r/params/id", "missing member 'required'"
            ),
            (
                #"{"contractVersion": 1, "plugin": {"name": "x", "version": "1"}, "protocolVersion": 1, "references": {"y": {"z": ["/types/a/routes/r"]}}, "types": {}}"#,
                "/references", "does not match the routes' targets"
            ),
            ("{\"contractVersion\": 1,", "", "not valid JSON"),
        ])
    func refused(_ text: String, _ pointer: String, _ phrase: String) {
        #expect {
            try RouteContract(parsing: Array(text.utf8))
        } throws: { error in
            guard let error = error as? ContractFormatError else { return false }
            return error.pointer.description == pointer && error.message.contains(phrase) && error.position != nil
        }
    }

    @Test("the position of a refused value is its line and column")
    func position() throws {
        let text =
            "{\n  \"contractVersion\": 1,\n  \"plugin\": {\"name\": \"x\", \"version\": \"1\"},\n  \"protocolVersion\": 1,\n  \"types\": {\"a\": {\"kind\": \"stak\", \"routes\": {}}}\n}"
        do {
            _ = try RouteContract(parsing: Array(text.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.position?.line == 5 && error.position?.column == 27)
        }
    }

    @Test("pointers escape '~' and '/' (RFC 6901) and read back")
    func pointerEscapes() {
        let pointer = JSONPointer(["types", "a/b", "c~d"])
        #expect(pointer.description == "/types/a~1b/c~0d")
        #expect(JSONPointer(parsing: pointer.description) == pointer)
        #expect(JSONPointer(parsing: "types") == nil && JSONPointer(parsing: "") == .root)
    }
}
