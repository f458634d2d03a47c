import SwitchyardSystem
import Synchronization
import SwitchyardHost
import SwitchyardNavigation
import SwitchyardProtocol

/// `switchyard run` on a terminal: reads commands and deep links, prints the tree after each change it makes, and
/// prints the changes made elsewhere — another client (`switchyard open`), a plugin's own navigation, a plugin
/// crashing or restarting — as they happen, above the line being typed.
struct Prompt {
    let host: HostHandle

    func run(_ interpreter: inout Interpreter) async {
        let events = host.events()
        let first = await host.snapshot()
        let completer = Shared(Completer(snapshot: first, registry: await host.routeRegistry()))
        // The example is one of this app's own links that resolves now, not the demo's.
        let example = await Self.exampleLink(completer.value, host)
        StandardOutput.write(
            "Switchyard — type a deep link\(example.map { " (\($0))" } ?? ""), a command (nav, tree, status, expect…), 'help' or 'quit'. "
                + "Tab completes; up and down arrows browse the history; Ctrl-C clears the line, Ctrl-D exits.\n")
        let editor = LineEditor(prompt: "switchyard> ") { line in completer.value.complete(line) }
        StandardOutput.write(TreeRenderer.text(first))
        editor.shown(revision: first.revision)
        let host = self.host
        let watcher = Task {
            for await event in events {
                switch event {
                case .treeChanged(let change):
                    let snapshot = change.snapshot
                    completer.update { $0.snapshot = snapshot }
                    editor.announce(
                        revision: change.revision,
                        "[revision \(change.revision), changed outside this prompt]\n" + TreeRenderer.text(snapshot))
                case .pluginChanged(let status):
                    // A restarted plugin may declare other routes: completion follows its new table.
                    let registry = await host.routeRegistry()
                    completer.update { $0.registry = registry }
                    editor.announce(
                        revision: nil,
                        "[plugin \(status.name): \(status.state)\(status.error.map { " — \($0.message)" } ?? "")]")
                case .destroyed:
                    break
                case .deepLinkChanged(let change):
                    editor.announce(
                        revision: nil, "[deep link \(change.link.url): \(DeferredLinkText.describe(change))]")
                }
            }
        }
        defer { watcher.cancel() }
        // Log lines (a plugin's stderr, the host's warnings) go above the line being typed, as changes do.
        await LogOutput.redirecting(to: { editor.log($0) }) { await read(editor, &interpreter, completer) }
    }

    /// A deep link of the app that the host validates now (a dry run: nothing changes), preferring the shortest that
    /// passes a value (`…/todo/1`), else the shortest; nil when the app declares none that resolves.
    static func exampleLink(_ completer: Completer, _ host: HostHandle) async -> String? {
        var shortest: String?
        for candidate in completer.exampleLinks() where await host.validate(candidate.link).valid {
            if candidate.passesValue { return candidate.link }
            shortest = shortest ?? candidate.link
        }
        return shortest
    }

    private func read(_ editor: LineEditor, _ interpreter: inout Interpreter, _ completer: Shared<Completer>) async {
        while let line = await editor.readLine() {
            switch await interpreter.run(line) {
            case .quiet: continue
            case .quit: return
            case .ok(let output, let changed):
                if changed {
                    let snapshot = await host.snapshot()
                    completer.update { $0.snapshot = snapshot }
                    StandardOutput.write(output + "\n" + TreeRenderer.text(snapshot))
                    editor.shown(revision: snapshot.revision)
                } else if !output.isEmpty {
                    StandardOutput.write(output.hasSuffix("\n") ? output : output + "\n")
                }
            case .failed(let message, _):
                StandardOutput.write("error: \(message)\n")
            }
        }
    }
}

/// A value shared between the prompt's loop, its event watcher and the editor's thread.
private final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value { mutex.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { mutex.withLock { body(&$0) } }
}
