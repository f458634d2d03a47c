import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// Screens as data through the real host and real plugin processes (Protocol/README.md §21), and the host's
/// revision history (§15.4). What `check-plugin` says of the same fixture: ScreenContentCheckTests.
@Suite("Screens as data, through the host", .heavy, .timeLimit(.minutes(3)))
struct ScreenContentHostTests {
    static let fixture = "\(packageRoot)/Tests/Fixtures/plugins/bad_screens.py"
    static let screens = PluginManifest(name: "screens", command: [TestPlugins.python, fixture])
    static let root = CoordinatorReference(plugin: "screens", type: "screens")

    /// The text of every row of the screen `content` holds.
    static func rowTitles(_ content: ContentSnapshot?) -> [String] {
        guard case .screen(let screen)? = content, case .array(let elements)? = screen.content else { return [] }
        return elements.flatMap { element -> [String] in
            (element["sections"]?.arrayValue ?? []).flatMap { section in
                (section["rows"]?.arrayValue ?? []).compactMap { $0["title"]?.stringValue }
            }
        }
    }

    @Test(
        "content naming an undeclared action, or over the size limit, is refused with a typed error naming the element's path or the limit; nothing changes"
    )
    func hostRefusesContent() async throws {
        try await withHost([Self.screens], root: Self.root) { host in
            let before = await host.snapshot()
            #expect(Self.rowTitles(before.instances.first?.root?.content) == ["Detail", "Huge"])
            do throws(ResponseError) {
                _ = try await host.open("switchyard://detail")
                Issue.record("a screen naming an undeclared action was shown")
            } catch {
                #expect(error.code == .invalidAnswer, "\(error)")
                #expect(error.data?["field"] == "content[1].action.name")
                #expect(error.data?["route"] == "detail" && error.data?["plugin"] == "screens")
                #expect(error.message.contains("declares no action 'delete'"), "\(error.message)")
            }
            // A tap on the row that opens it: the owner's chain fails the same way, and the tap gets the error.
            let home = try #require(before.instances.first)
            let row = try #require(home.root?.entry)
            do throws(ResponseError) {
                _ = try await host.userAction(instance: home.id, entry: row, action: "open", params: ["route": "huge"])
                Issue.record("a screen over the size limit was shown")
            } catch {
                #expect(error.code == .limitExceeded, "\(error)")
                #expect(error.data?["limit"] == "maxScreenElements")
                #expect(error.data?["max"] == .int(Int64(ScreenVocabulary.maxElements)))
                #expect(error.data?["field"] == "content")
            }
            #expect(await host.snapshot() == before)
        }
    }

    @Test(
        "tree/history: every revision with what made it (start, a chain, a link, an action's owner), oldest first, bounded, after a revision; a long chain's record keeps its first 16 steps and a summary of the first that fit"
    )
    func history() async throws {
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            _ = try await host.open("switchyard://todos/todo/42")
            let todos = try #require(await host.snapshot().find("todos", "todos"))
            let todo = try #require(todos.entries?.last?.entry)
            let completed = try await host.userAction(
                instance: todos.id, entry: todo, action: "complete", params: ["id": "42"])
            let history = try await host.history()
            #expect(history.capacity == 200)
            #expect(history.revisions.map(\.revision) == Array(1...completed.revision))
            #expect(history.revisions.map(\.cause) == [.start, .navigate, .open, .action])
            #expect(history.revisions.map(\.by) == [nil, "control", "control", "todos"])
            #expect(history.revisions[1].summary == #"setRoot authenticated {"user":"alice"}"#)
            #expect(history.revisions[2].summary == "switchyard://todos/todo/42")
            let action = history.revisions[3]
            #expect(
                action.summary.hasPrefix("complete on entry e\(todo.rawValue) ('todo') of #\(todos.id.rawValue): pop"))
            #expect(action.steps?.first == .pop(todo))
            #expect(action.instances?.contains(todos.id) == true)
            #expect(history.revisions.allSatisfy { $0.time.hasSuffix("Z") && $0.time.count == 24 })
            #expect(try await host.history(after: 2).revisions.map(\.revision) == [3, 4])

            // A long chain is kept bounded: its first 16 steps, how many more it had, a summary that says so.
            let long = Array(repeating: NavigationStep.route("todo", ["id": "42"]), count: 40)
            let applied = try await host.navigate(from: todos.id, long)
            let record = try #require(try await host.history().revisions.last)
            #expect(record.revision == applied.revision)
            #expect(record.steps == Array(long.prefix(16)))
            #expect(record.stepsOmitted == 24)
            #expect(record.summary.hasPrefix(#"route todo {"id":"42"} › route todo {"id":"42"}"#))
            #expect(record.summary.hasSuffix(#"route todo {"id":"42"} › … 31 more"#), "nine steps fit the summary")
            #expect(record.instancesOmitted == nil)
        }
    }

    @Test(
        "the demo's create-todo form adds a todo to the list in the same revision, kept in the plugin's state: after the plugin is killed and restored, the list still shows it"
    )
    func addedTodoSurvivesARestart() async throws {
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.allowFaults = true
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: options) { host in
            let events = EventLog(host)
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            let todos = try #require(await host.snapshot().find("todos", "todos"))
            let list = try #require(todos.root?.entry)
            _ = try await host.userAction(instance: todos.id, entry: list, action: "create")
            let sheet = try #require(await host.snapshot().instance(todos.id)?.entries?.last)
            #expect(sheet.route == "createTodo")
            let refused = await #expect(throws: ResponseError.self) {
                try await host.userAction(instance: todos.id, entry: sheet.entry, action: "add", params: ["title": " "])
            }
            #expect(refused?.code == .rejectedByGuard && refused?.message == "a todo needs a title")
            let before = await host.snapshot().revision
            let added = try await host.userAction(
                instance: todos.id, entry: sheet.entry, action: "add", params: ["title": "Call mum"])
            #expect(added.revision == before + 1)
            var tree = await host.snapshot()
            #expect(tree.instance(todos.id)?.entries == [])
            #expect(tree.instance(todos.id)?.root?.entry == list, "the list was refreshed in place")
            let rows = Self.rowTitles(tree.instance(todos.id)?.root?.content)
            #expect(rows.contains("Call mum"), "\(rows)")
            #expect(tree.find("authenticated", "home")?.tabs?.first?.badge == "5")

            _ = try await host.injectFault(.kill, plugin: "todos")
            try await events.waitUntilReady(host, "todos", restarts: 1)
            _ = try await host.navigate(from: todos.id, [.refresh("list")])
            tree = await host.snapshot()
            let restored = Self.rowTitles(tree.instance(todos.id)?.root?.content)
            #expect(restored.contains("Call mum"), "\(restored)")
        }
    }
}
