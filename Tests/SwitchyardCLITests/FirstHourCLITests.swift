import Foundation
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Issue 15, "the CLI" and the second host: the CLI behaves like the tools people know. Hosts here get a private
/// `XDG_RUNTIME_DIR`, so their default sockets (the ones a user gets) are the test's own.
@Suite("the first hour: the CLI", .heavy, .timeLimit(.minutes(3)))
struct FirstHourCLITests {
    /// A private runtime folder; Docs/Troubleshooting.md writes it `/run/user/1000`.
    static func runtime() throws -> (environment: [String: String], replacing: [(String, String)]) {
        let directory = try TestSweep.temporaryDirectory()
        return (["XDG_RUNTIME_DIR": directory], [(directory, "/run/user/1000")])
    }

    /// A demo host on the default socket of `environment`'s runtime folder, ready.
    static func startHost(_ environment: [String: String], _ arguments: [String] = []) async throws -> CLIProcess {
        let host = try CLIProcess(["run"] + arguments, environment: environment)
        do { try await host.waitForStderr("switchyard: ready (6/6 plugins") } catch {
            host.signal(SIGKILL)
            throw error
        }
        return host
    }

    @Test("Docs/Troubleshooting.md quotes only messages a test checks, and every one of them")
    func troubleshootingSection() throws {
        #expect(Set(try Troubleshooting.documented().keys) == Troubleshooting.ids)
    }

    @Test(
        "a second host for the same app names the first (its pid) and how to run beside it; the first is untouched; --app runs a second copy"
    )
    func secondHost() async throws {
        let (environment, replacing) = try Self.runtime()
        let first = try await Self.startHost(environment)
        defer { first.signal(SIGKILL) }
        let socket = "\(environment["XDG_RUNTIME_DIR"] ?? "")/switchyard/demo.sock"
        #expect(FileSystem.exists(socket))
        let opened = try await runSwitchyard(["open", "switchyard://about"], environment: environment)
        #expect(opened.status == 0, "\(opened.errorText)")

        let second = try await runSwitchyard(["run", "--script", "-"], environment: environment)
        #expect(second.status == 69)
        #expect(second.stdout.isEmpty)
        #expect(
            second.stderr == [
                "switchyard: error: another host (pid \(first.pid)) is already listening on \(socket)",
                "  stop that host (`switchyard shutdown --app demo`), or run this app beside it under another name (`switchyard run --app NAME`) or socket (`--socket PATH`)",
            ])
        try Troubleshooting.check("second-host", second.errorText, replacing: replacing)

        // The first host still serves, unchanged, on its socket.
        let status = try await runSwitchyard(["status"], environment: environment)
        #expect(status.stdout.first == "revision 2")
        #expect(status.stdout.filter { $0.contains("  ready  pid ") }.count == 6)

        // Beside it, under another name.
        let beside = try await runSwitchyard(["run", "--app", "demo2", "--script", "-"], environment: environment)
        #expect(beside.status == 0, "\(beside.errorText)")
        #expect(
            beside.errorText.contains("control socket \(environment["XDG_RUNTIME_DIR"] ?? "")/switchyard/demo2.sock"))

        // The tutorial's manifest names its own app, so it too runs beside the demo.
        let tutorial = try #require(try ReadmeTests.markedFiles().first { $0.path == "myapp/switchyard.json" })
        #expect(try JSONParser.parse(tutorial.content)["app"] == "myapp")

        first.signal(SIGTERM)
        #expect(try await first.waitForExit() == 0)
        #expect(!FileSystem.exists(socket))
    }

    @Test("a client command with no host running: status 69 and how to find one")
    func noHost() async throws {
        let (environment, replacing) = try Self.runtime()
        let result = try await runSwitchyard(["tree"], environment: environment)
        #expect(result.status == 69)
        #expect(result.stdout.isEmpty)
        try Troubleshooting.check("no-host", result.errorText, replacing: replacing)
    }

    @Test(
        "every prompt command is a client subcommand of the same name and syntax (nav, dismissed, query, validate, expect, wait), with --log-level"
    )
    func promptCommandsAsSubcommands() async throws {
        let (environment, _) = try Self.runtime()
        let host = try await Self.startHost(environment)
        defer { host.signal(SIGKILL) }
        func run(_ arguments: [String]) async throws -> CLIRun {
            try await runSwitchyard(arguments, environment: environment)
        }

        // Signed out, a deep link into the tabs is invalid: the typed error, status 1, nothing changed.
        let signedOut = try await run(["open", "switchyard://todos/todo/42"])
        #expect(signedOut.status == 1)
        try Troubleshooting.check("signed-out-link", signedOut.errorText)

        let nav = try await run([
            "nav", "@root", "setRoot", "authenticated", #"{"user":"alice"}"#, "--log-level", "debug",
        ])
        #expect(nav.status == 0, "\(nav.errorText)")
        #expect(nav.stdout == ["revision 2, landed on authenticated.home#3"])
        // --log-level on a client command, and a debug line's ISO 8601 timestamp with milliseconds.
        #expect(
            nav.stderr.contains {
                $0.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z DEBUG connected to the host at .*/) != nil
            }, "\(nav.stderr)")

        #expect(
            try await run(["validate", "switchyard://todos/todo/42"]).stdout == [
                #"valid: hasRoot authenticated > selectTab todos > child > route todo {"id":"42"}"#
            ])
        let invalid = try await run(["validate", "switchyard://nowhere"])
        #expect(invalid.status == 1)
        #expect(invalid.stdout.first?.hasPrefix("invalid: ") == true)

        #expect(try await run(["open", "switchyard://todos/todo/42"]).status == 0)
        #expect(try await run(["expect", "stack", "todos.todos", "todo"]).status == 0)
        #expect(try await run(["query", "currentRoute", "todos.todos"]).stdout == [#""todo""#])
        let dismissed = try await run(["dismissed", "todos.todos", "top"])
        #expect(dismissed.stdout == ["revision 4"], "\(dismissed.errorText)")
        #expect(try await run(["expect", "stack", "todos.todos", "-"]).status == 0)
        // Steps separated by '>' (quoted for the shell), params as JSON.
        let chain = try await run(["nav", "todos.todos", "popToRoot", ">", "route", "todo", #"{"id":"7"}"#])
        #expect(chain.status == 0, "\(chain.errorText)")
        #expect(try await run(["wait", "100", "stack", "todos.todos", "todo"]).status == 0)

        let failed = try await run(["expect", "root", "unauthenticated"])
        #expect(failed.status == 1)
        #expect(
            failed.errorText == "switchyard: error: expected the root route 'unauthenticated', found 'authenticated'")
        let timedOut = try await run(["wait", "100", "root", "unauthenticated"])
        #expect(timedOut.status == 1)
        #expect(timedOut.errorText.contains("after 100 ms: expected the root route 'unauthenticated'"))

        // The prompt's own words: every command of its help is a subcommand.
        for command in ["open", "validate", "nav", "dismissed", "query", "tree", "status", "expect", "wait"] {
            let help = try await run([command, "--help"])
            #expect(help.status == 0, "switchyard \(command) --help: \(help.errorText)")
            #expect(
                help.stdout.joined(separator: "\n").contains("--log-level"), "switchyard \(command) has no --log-level")
        }
        #expect(try await run(["tree", "json"]).stdout.first?.hasPrefix("{") == true)
        #expect(try await run(["shutdown"]).status == 0)
        #expect(try await host.waitForExit() == 0)
    }

    @Test("`run --script … --json | python3 -m json.tool` succeeds: stdout holds the JSON document alone")
    func jsonPipe() async throws {
        let script = "Plugins/demo/scenarios/stinsen-readme.txt"
        let piped = try CLIProcess(
            // The CLI watches its parent (SWITCHYARD_EXIT_WITH_PARENT), here the shell running the pipe.
            [
                "-o", "pipefail", "-c",
                "SWITCHYARD_EXIT_WITH_PARENT=$$ \"$0\" run --script \(script) --json --no-socket | python3 -m json.tool > /dev/null",
                product("switchyard"),
            ],
            executable: "/bin/bash")
        piped.closeStdin()
        #expect(try await piped.waitForExit() == 0, "\(piped.stderr.suffix(20).joined(separator: "\n"))")

        let direct = try await runSwitchyard(["run", "--script", script, "--json", "--no-socket"])
        #expect(direct.status == 0)
        #expect(direct.stdout.count == 1)
        // The transcript is on stderr.
        #expect(direct.stderr.contains("ok: wait root authenticated"))
    }

    @Test("--log-format json: every log line is one JSON object with a timestamp, level and message")
    func jsonLogs() async throws {
        let result = try await runSwitchyard([
            "run", "--script", "-", "--no-socket", "--log-format", "json", "--log-level", "debug",
        ])
        #expect(result.status == 0)
        #expect(result.stderr.count > 3)
        for line in result.stderr {
            let object = try JSONParser.parse(line)
            #expect(
                object["timestamp"]?.stringValue?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil,
                "\(line)")
            #expect(object["level"] != nil && object["message"] != nil, "\(line)")
        }
        #expect(result.stderr.contains { $0.contains(#""message":"ready (6/6 plugins"#) })
        // Plugins' own lines carry their name as a field.
        #expect(result.stderr.contains { (try? JSONParser.parse($0))?["plugin"] != nil })
    }

    @Test(
        "the bash completion script completes --app from the running hosts and --manifest from .json files",
        .enabled(if: FileSystem.exists("/bin/bash"), "needs bash"))
    func shellCompletion() async throws {
        let (environment, _) = try Self.runtime()
        let host = try await Self.startHost(environment, ["--app", "completion-demo"])
        defer { host.signal(SIGKILL) }
        // What bash does on Tab: the completion function with the words so far, then COMPREPLY.
        // The completion calls are short-lived children of subshells: they watch no parent.
        let complete = """
            unset SWITCHYARD_EXIT_WITH_PARENT
            source <("$0" --generate-completion-script bash)
            COMP_WORDS=("$0" "$1" "$2" "$3"); COMP_CWORD=3; COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
            _switchyard "$0" "$3" "$2"; printf '%s\\n' "${COMPREPLY[@]}"
            """
        func completions(_ words: [String]) async throws -> [String] {
            let process = try CLIProcess(
                ["-c", complete, product("switchyard")] + words, executable: "/bin/bash", environment: environment)
            process.closeStdin()
            #expect(try await process.waitForExit() == 0, "\(process.stderr)")
            return process.stdout
        }
        #expect(try await completions(["tree", "--app", "completion-"]) == ["completion-demo"])
        #expect(try await completions(["run", "--manifest", "Plugins/demo/sw"]) == ["Plugins/demo/switchyard.json"])

        let readme = String(decoding: try FileSystem.readFile(packageRoot + "/README.md"), as: UTF8.self)
        #expect(readme.contains("switchyard --generate-completion-script bash"))
        host.signal(SIGTERM)
        #expect(try await host.waitForExit() == 0)
    }
}
