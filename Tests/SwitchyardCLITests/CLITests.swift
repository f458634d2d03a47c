import Foundation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The `switchyard` executable end to end: the real CLI, the real host, the demo app's real plugin processes.
@Suite("switchyard CLI", .heavy, .timeLimit(.minutes(2)))
struct CLITests {
    static func temporaryDirectory(mode: UInt32 = 0o700) throws -> String {
        try TestSweep.temporaryDirectory(mode: mode)
    }

    static func lastJSONLine(_ lines: [String]) throws -> TreeSnapshot { try lastTreeJSONLine(lines) }

    /// Runs a CLI command to completion and returns its status, stdout and stderr.
    static func run(
        _ arguments: [String], executable: String = product("switchyard")
    ) async throws -> (status: Int32, stdout: [String], stderr: [String]) {
        let process = try CLIProcess(arguments, executable: executable)
        process.closeStdin()
        let status = try await process.waitForExit()
        return (status, process.stdout, process.stderr)
    }

    @Test("run --script replays the Coordinator and SUICoordinator README examples on the demo app")
    func coordinatorAndSUICoordinatorScenario() async throws {
        let result = try await Self.run([
            "run", "--script", "Plugins/demo/scenarios/coordinator-suicoordinator-readme.txt", "--json", "--no-socket",
        ])
        #expect(result.status == 0, "stderr:\n\(result.stderr.joined(separator: "\n"))")
        #expect(result.stderr.contains("ok: expect badge todos 3"))
        let tree = try Self.lastJSONLine(result.stdout)
        let home = try #require(tree.instances.first { $0.plugin == "authenticated" && $0.type == "home" })
        #expect(home.tabs?.map(\.route) == ["todos", "projects", "profile", "inbox"])
        #expect(home.tabs?.first { $0.route == "inbox" }?.badge == "2")
    }

    @Test("run --script replays the Stinsen README scenarios on the demo app and --json prints the expected tree")
    func stinsenScenario() async throws {
        let result = try await Self.run([
            "run", "--script", "Plugins/demo/scenarios/stinsen-readme.txt", "--json", "--no-socket",
        ])
        #expect(result.status == 0, "stderr:\n\(result.stderr.joined(separator: "\n"))")
        // With --json the transcript goes to stderr: stdout is the JSON document alone.
        #expect(result.stderr.contains("ok: wait root authenticated"))
        #expect(result.stderr.contains("ok: expect error notAllowed nav authenticated.home popToRoot"))
        #expect(result.stdout.count == 1)

        let tree = try Self.lastJSONLine(result.stdout)
        #expect(tree.revision == 22)
        #expect(tree.instances.allSatisfy { $0.status == .ok })
        #expect(
            tree.instances.map { "\($0.plugin).\($0.type)" } == [
                "main.main", "authenticated.home", "todos.navigation", "todos.todos", "projects.projects",
                "profile.profile",
            ])
        let main = try #require(tree.instances.first)
        #expect(main.root?.route == "authenticated")
        #expect(main.root?.params == ["user": "alice"])
        #expect(main.state == ["user": "alice"])
        #expect(main.entries == [])
        let home = try #require(tree.instances.first { $0.type == "home" })
        #expect(home.selectedTab == "todos")
        #expect(home.tabs?.map(\.route) == ["todos", "projects", "profile"])
        let todos = try #require(tree.instances.first { $0.type == "todos" })
        #expect(todos.entries?.map(\.route) == ["todo", "todo"])
        #expect(todos.entries?.map(\.params) == [["id": "99"], ["id": "42"]])
        #expect(
            todos.entries?.last?.content.nameAndProps
                == ScreenDescriptor(name: "Todo", props: ["id": "42", "title": "Answer everything"]))
        let projects = try #require(tree.instances.first { $0.type == "projects" })
        #expect(projects.entries == [])
    }

    @Test("a Swift plugin that prints from a route factory: the line is logged with the plugin's name, the route works")
    func printFromRouteFactory() async throws {
        let process = try CLIProcess(["run", "--script", "-", "--json", "--no-socket"])
        process.send(
            """
            nav @root setRoot authenticated {"user":"alice"}
            nav todos.todos route todo {"id":"7"}
            expect stack todos.todos todo

            """)
        process.closeStdin()
        #expect(try await process.waitForExit() == 0, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        #expect(process.stderr.contains("NOTICE [todos] opening todo 7"))
        let todos = try #require(try Self.lastJSONLine(process.stdout).instances.first { $0.type == "todos" })
        #expect(
            todos.entries?.last?.content.nameAndProps
                == ScreenDescriptor(name: "Todo", props: ["id": "7", "title": "Write the spec"]))
        #expect(!process.stderr.contains { $0.contains("parseError") || $0.contains("protocol") })
    }

    @Test("`dismissed TARGET top` on an instance that shows only its root is refused with the host's typed notAllowed")
    func dismissingARoot() async throws {
        let process = try CLIProcess(["run", "--script", "-", "--no-socket"])
        process.send(
            """
            expect error notAllowed dismissed unauthenticated.unauthenticated top
            expect error notAllowed dismissed @root top
            nav unauthenticated.unauthenticated route forgotPassword
            dismissed unauthenticated.unauthenticated top
            expect stack unauthenticated.unauthenticated -

            """)
        process.closeStdin()
        #expect(try await process.waitForExit() == 0, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        #expect(process.stdout.contains("ok: expect error notAllowed dismissed unauthenticated.unauthenticated top"))
    }

    @Test("a script stops at the first failure with a non-zero status, the file, the line and the typed error")
    func scriptFailure() async throws {
        let directory = try Self.temporaryDirectory()
        let script = directory + "/failing.txt"
        try
            "# signed out at start\nexpect root unauthenticated\nswitchyard://todos/nowhere\nexpect root authenticated\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        let result = try await Self.run(["run", "--script", script, "--no-socket"])
        #expect(result.status != 0)
        let error = result.stderr.joined(separator: "\n")
        #expect(
            error.contains(
                "failing.txt:3: deepLinkInvalid (-32014): deep link switchyard://todos/nowhere is invalid at segment 0 'todos'"
            ))
        #expect(!result.stdout.contains("» expect root authenticated"), "the run must stop at the first failure")

        let missing = try await Self.run(["run", "--script", directory + "/absent.txt", "--no-socket"])
        #expect(missing.status != 0)
        #expect(missing.stderr.joined().contains("cannot read the script"))
    }

    @Test("open, tree, watch, status and shutdown talk to a running `switchyard run` over its socket")
    func clientCommands() async throws {
        let directory = try Self.temporaryDirectory()
        let socket = directory + "/demo.sock"
        let host = try CLIProcess(["run", "--socket", socket])
        try await host.waitForStderr("switchyard: ready (6/6 plugins")
        #expect(FileSystem.permissions(socket) == 0o600)

        let watch = try CLIProcess(["watch", "--socket", socket, "--json", "--count", "2"])
        let first = try JSONValueDecoder().decode(
            TreeSnapshot.self, from: JSONParser.parse(try await watch.stdoutLine(0)))
        #expect(first.revision == 1)

        let opened = try await Self.run(["open", "--socket", socket, "switchyard://forgot?email=a@b.c"])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout == ["revision 2, landed on unauthenticated.unauthenticated#2"])

        let invalid = try await Self.run(["open", "--socket", socket, "switchyard://todos/todo/42"])
        #expect(invalid.status != 0)
        #expect(
            invalid.stderr.joined().contains(
                "deepLinkInvalid (-32014): deep link switchyard://todos/todo/42 is invalid at segment 0 'todos'"))

        let validated = try await Self.run(["open", "--socket", socket, "--validate", "switchyard://about"])
        #expect(validated.stdout == ["valid: route about"])

        let about = try await Self.run(["open", "--socket", socket, "switchyard://about", "--tree"])
        #expect(about.stdout.first == "revision 3, landed on main.main#1")
        #expect(about.stdout.contains { $0.contains("modal about") })

        // watch saw both changes, in order, each with its snapshot, and stopped after --count.
        #expect(try await watch.waitForExit() == 0)
        let changes = try watch.stdout.dropFirst().map { line in
            try JSONValueDecoder().decode(
                TreeChangedNotification.Params.self, from: #require(JSONParser.parse(line)["params"]))
        }
        #expect(changes.map(\.revision) == [2, 3])
        #expect(changes.last?.snapshot?.instances.first?.entries?.map(\.route) == ["about"])

        for format in ["text", "json", "dot", "mermaid"] {
            let tree = try await Self.run(["tree", "--socket", socket, "--format", format])
            #expect(tree.status == 0)
            #expect(!tree.stdout.isEmpty)
        }
        let json = try await Self.run(["tree", "--socket", socket, "--format", "json"])
        #expect(try Self.lastJSONLine(json.stdout).revision == 3)
        // watch received patches (tree/subscribe deltas) and printed the trees they lead to: the last is tree/get's.
        #expect(changes.last?.snapshot == (try Self.lastJSONLine(json.stdout)))

        let status = try await Self.run(["status", "--socket", socket])
        #expect(status.stdout.first == "revision 3")
        #expect(status.stdout.filter { $0.contains("  ready  pid ") }.count == 6)

        let badFormat = try await Self.run(["tree", "--socket", socket, "--format", "svg"])
        #expect(badFormat.status != 0)

        #expect(try await Self.run(["shutdown", "--socket", socket]).status == 0)
        #expect(try await host.waitForExit() == 0)
        #expect(!FileSystem.exists(socket))
        let gone = try await Self.run(["tree", "--socket", socket])
        #expect(gone.status != 0)
        #expect(gone.stderr.joined().contains("is `switchyard run` running?"))
    }

    @Test(
        "the socket is 0600 and the host refuses a client of another user (SO_PEERCRED), and keeps serving its own",
        .enabled(
            if: getuid() == 0 && FileSystem.exists("/usr/bin/setpriv"),
            "needs root and setpriv to run a client as nobody"))
    func peerCredentials() async throws {
        // A folder anyone may traverse, so that only the socket's own mode and the uid check stand in the way.
        let directory = try Self.temporaryDirectory(mode: 0o755)
        let socket = directory + "/demo.sock"
        // The client binary must be reachable by nobody, whatever the checkout's permissions.
        let binary = directory + "/switchyard"
        // Under the spawn lock, so no child forked meanwhile holds the copy open for writing (ETXTBSY at its exec).
        try SpawnLock.withLock { try FileManager.default.copyItem(atPath: product("switchyard"), toPath: binary) }
        try FileSystem.setPermissions(binary, 0o755)
        let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups", binary]

        let host = try CLIProcess(["run", "--socket", socket])
        try await host.waitForStderr("switchyard: ready")
        #expect(FileSystem.permissions(socket) == 0o600)

        let denied = try await Self.run(asNobody + ["tree", "--socket", socket], executable: "/usr/bin/setpriv")
        #expect(denied.status != 0)
        #expect(denied.stderr.joined().contains("EACCES"), "\(denied.stderr)")

        // Opened up by mistake: the CLI of the other user refuses this host (its own SO_PEERCRED check)...
        try FileSystem.setPermissions(socket, 0o666)
        let refused = try await Self.run(asNobody + ["tree", "--socket", socket], executable: "/usr/bin/setpriv")
        #expect(refused.status != 0)
        #expect(refused.stderr.joined().contains("refusing to talk to it"), "\(refused.stderr)")
        // ...and a raw client of the other user that does not check is refused by the host, with a typed error (sent
        // at once on accept: the client only reads, so its own write cannot race the host's close).
        let raw = try await Self.run(
            asNobody.dropLast() + [
                "/usr/bin/python3", "-c",
                "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(65536).decode())",
                socket,
            ], executable: "/usr/bin/setpriv")
        #expect(raw.stdout.joined().contains("-32007"), "\(raw)")

        let mine = try await Self.run(["tree", "--socket", socket])
        #expect(mine.status == 0)
        #expect(mine.stdout.first?.hasPrefix("main.main#1 stack") == true)
        host.signal(SIGTERM)
        #expect(try await host.waitForExit() == 0)
    }

    @Test(
        "the interactive prompt under a real terminal (tmux): commands and deep links, the tree after each change, history, Tab completion, a change from another client and a plugin's log line printed above a half-typed line, Ctrl-C clears the line, Ctrl-D exits",
        .enabled(
            if: FileSystem.findExecutable("tmux", path: SystemProcess.environmentValue("PATH")) != nil, "needs tmux"))
    func interactivePrompt() async throws {
        let session = TestSweep.tmuxSession("prompt-\(UInt32.random(in: 0...UInt32.max))")
        // tmux daemonizes its server: SystemProcess.run waits for the client's exit, not for inherited pipes to close.
        func tmux(_ arguments: [String]) async throws -> [String] {
            let result = try await onThreadOfItsOwn {
                try SystemProcess.run(["tmux"] + arguments, timeoutMilliseconds: 10_000)
            }
            guard result.status == 0 else {
                throw TestFailure("tmux \(arguments.joined(separator: " ")) failed: \(result.text)")
            }
            return result.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        /// The pane's text. A terminal has no "output arrived" event a test can wait on, so this polls the screen,
        /// bounded by the test timeout.
        func waitForScreen(_ what: String, count: Int = 1) async throws -> [String] {
            let deadline = ContinuousClock.now + .seconds(defaultTimeout)
            var screen: [String] = []
            while ContinuousClock.now < deadline {
                screen = try await tmux(["capture-pane", "-p", "-J", "-S", "-200", "-t", session])
                if screen.filter({ $0.contains(what) }).count >= count { return screen }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestFailure("the screen never showed '\(what)' ×\(count):\n\(screen.joined(separator: "\n"))")
        }
        let socket = try Self.temporaryDirectory() + "/prompt.sock"
        let command =
            "cd '\(packageRoot)' && SWITCHYARD_PRODUCTS_DIR='\(productsDirectory)' '\(product("switchyard"))' run --socket '\(socket)'; echo exit status $?; sleep 30"
        _ = try await tmux(["new-session", "-d", "-s", session, "-x", "220", "-y", "60", command])
        defer { _ = try? SystemProcess.run(["tmux", "kill-session", "-t", session]) }
        /// Types `text` (literally), then presses `keys` (tmux key names: Enter, Tab, Up, C-c…).
        func type(_ text: String, _ keys: String...) async throws {
            if !text.isEmpty { _ = try await tmux(["send-keys", "-t", session, "-l", text]) }
            if !keys.isEmpty { _ = try await tmux(["send-keys", "-t", session] + keys) }
        }

        let banner = try await waitForScreen("switchyard> ")
        // The banner's example is a link of this app that resolves now: the shortest, main's `about` (no link passes
        // a value while signed out), not a fixed one (the todo link it used to show does not resolve here).
        #expect(banner.contains { $0.contains("type a deep link (switchyard://about)") }, "\(banner)")
        try await type(#"nav @root setRoot authenticated {"user":"alice"}"#, "Enter")
        var screen = try await waitForScreen("tab todos ● ⇒ todos.navigation")
        #expect(screen.contains { $0.contains("revision 2, landed on authenticated.home#3") })

        try await type("switchyard://todos/todo/42", "Enter")
        screen = try await waitForScreen("push todo{\"id\":\"42\"}")

        // Up twice brings back the nav command; re-running it changes nothing (already the root).
        try await type("", "Up", "Up", "Enter")
        screen = try await waitForScreen("revision 3, landed on authenticated.home#3")
        try await type("history", "Enter")
        screen = try await waitForScreen("3  nav @root setRoot authenticated")

        try await type("switchyard://nowhere", "Enter")
        _ = try await waitForScreen("error: deepLinkInvalid (-32014)")

        // Tab completes the command, the target, the step and the route name (from the live route tables)...
        for typed in ["na", "todos.t", "ro", "tod"] { try await type(typed, "Tab") }
        _ = try await waitForScreen("switchyard> nav todos.todos route todo ")
        try await type(#"{"id":"7"}"#, "Enter")
        _ = try await waitForScreen("push todo{\"id\":\"7\"}")
        // ...and a deep link, one segment at a time.
        try await type("switchyard://todos/to", "Tab")
        _ = try await waitForScreen("switchyard> switchyard://todos/todo/")
        try await type("99", "Enter")
        _ = try await waitForScreen("push todo{\"id\":\"99\"}")

        // Another client changes the tree while a line is half typed: the change is printed above it, and the line
        // is drawn again as it was.
        try await type("query currentR")
        _ = try await waitForScreen("switchyard> query currentR")
        let opened = try await Self.run(["open", "--socket", socket, "switchyard://about"])
        #expect(opened.status == 0, "\(opened.stderr)")
        screen = try await waitForScreen("changed outside this prompt]")
        screen = try await waitForScreen("modal about")
        #expect(
            screen.last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } == "switchyard> query currentR",
            "\(screen.suffix(5))")

        // A plugin's log line while the line is half typed: printed above it on a line of its own, never on it.
        let logged = try await Self.run(["open", "--socket", socket, "switchyard://todos/todo/1"])
        #expect(logged.status == 0, "\(logged.stderr)")
        screen = try await waitForScreen("changed outside this prompt]", count: 2)
        screen = try await waitForScreen("NOTICE [todos] opening todo 1")
        #expect(screen.contains("NOTICE [todos] opening todo 1"), "\(screen.suffix(12))")
        #expect(
            screen.last { !$0.trimmingCharacters(in: .whitespaces).isEmpty } == "switchyard> query currentR",
            "\(screen.suffix(12))")

        // Ctrl-C abandons the half-typed line, and the host goes on.
        try await type("", "C-c")
        _ = try await waitForScreen("switchyard> query currentR^C")
        try await type("status", "Enter")
        screen = try await waitForScreen("profile  ready  pid ")
        #expect(!screen.contains { $0.contains("exit status") })

        // Ctrl-D on an empty line exits: the host shuts down its plugins; the shell then sleeps, so the pane is
        // still there to read.
        try await type("", "C-d")
        _ = try await waitForScreen("exit status 0")
        #expect(!FileSystem.exists(socket))
    }
}
