import Foundation
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Docs/Troubleshooting.md quotes what the CLI prints for the likeliest mistakes. Each quote sits in a
/// fenced block after `<!-- troubleshooting: ID -->`, and the test that makes that mistake checks the quote against
/// what it got, so the section cannot drift from the code (as the tutorial cannot, through `ReadmeTests`).
enum Troubleshooting {
    /// Every quote in the section, each checked by a test below (and the section holds no other).
    static let ids: Set = [
        "unknown-key", "json-syntax", "command-string", "duplicate-plugin", "no-manifest", "product-not-built",
        "state-folder", "second-host", "no-host", "studio-port-in-use", "signed-out-link", "route-without-method",
        "route-method-no-return",
    ]

    /// id → the quoted text.
    static func documented() throws -> [String: String] {
        Dictionary(
            try readmeBlocks(marker: "troubleshooting", in: "Docs/Troubleshooting.md").map { ($0.label, $0.content) }
        ) { first, _ in first }
    }

    /// Checks that Docs/Troubleshooting.md quotes `actual` under `id`. Pids, and the folders of this run
    /// (`replacing`, e.g. a temporary XDG_RUNTIME_DIR → `/run/user/1000`), are put as the document writes them.
    static func check(
        _ id: String, _ actual: String, replacing: [(String, String)] = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(ids.contains(id), "'\(id)' is not in Troubleshooting.ids", sourceLocation: sourceLocation)
        var normalized = actual.replacing(/pid \d+/, with: "pid 4242")
        for (from, to) in replacing { normalized = normalized.replacingOccurrences(of: from, with: to) }
        let quoted = try documented()[id]
        #expect(
            quoted == normalized,
            "Docs/Troubleshooting.md '\(id)' quotes:\n\(quoted ?? "(nothing)")\nbut the CLI printed:\n\(normalized)",
            sourceLocation: sourceLocation)
    }
}

/// Issue 15, "manifest and start-up": each mistake a new user makes gets an error that says what, where and what to
/// do, with its exit status, and changes nothing else.
@Suite("the first hour: manifest and start-up mistakes", .heavy, .timeLimit(.minutes(3)))
struct FirstHourManifestTests {
    /// A folder with `myapp/switchyard.json` holding `manifest`, as the tutorial lays it out.
    static func myapp(_ manifest: String) throws -> String {
        let directory = try TestSweep.temporaryDirectory()
        try FileSystem.makeDirectory(directory + "/myapp")
        try SpawnLock.withLock {
            try manifest.write(toFile: directory + "/myapp/switchyard.json", atomically: true, encoding: .utf8)
        }
        return directory
    }

    /// Runs `switchyard run` on a broken `myapp/switchyard.json`, and checks it refused before doing anything: only
    /// the diagnostics on stderr (no usage text, no log, no "ready"), nothing on stdout, no socket, no state file.
    static func refused(_ manifest: String, status: Int32, extra: [String] = []) async throws -> String {
        let directory = try myapp(manifest)
        let result = try await runSwitchyard(
            [
                "run", "--manifest", "myapp/switchyard.json", "--socket", "\(directory)/app.sock", "--state",
                "\(directory)/app.state",
            ] + extra,
            in: directory)
        #expect(result.status == status, "\(result.errorText)")
        #expect(result.stdout.isEmpty)
        #expect(!result.errorText.contains("Usage"))
        #expect(!result.errorText.contains("ready"))
        #expect(!FileSystem.exists("\(directory)/app.sock"))
        #expect(!FileSystem.exists("\(directory)/app.state"))
        return result.errorText
    }

    /// A mistake in `myapp/switchyard.json`, the id Docs/Troubleshooting.md quotes it under, and where and what the
    /// error says.
    struct Mistake: Sendable, CustomTestStringConvertible {
        let id: String
        let manifest: String
        let error: String
        var testDescription: String { id }
    }

    static let mistakes = [
        Mistake(
            id: "unknown-key",
            manifest: """
                {
                  "app": "myapp",
                  "rot": {"plugin": "main", "type": "main"},
                  "plugins": [
                    {"name": "profile", "command": ["python3", "profile.py"]}
                  ]
                }
                """,
            error: "myapp/switchyard.json:3:3: error: unknown key 'rot' in the manifest; did you mean 'root'?"),
        Mistake(
            id: "json-syntax",
            manifest: """
                {
                  "app": "myapp",
                  "plugins": [
                    {"name": "profile", "command": ["python3", "profile.py"]},
                  ]
                }
                """,
            error: "myapp/switchyard.json:5:3: error: not valid JSON: unexpected character ']'"),
        Mistake(
            id: "command-string",
            manifest: """
                {
                  "app": "myapp",
                  "plugins": [
                    {"name": "profile", "command": "python3 profile.py"}
                  ]
                }
                """,
            error: "myapp/switchyard.json:4:36: error: 'plugins[0].command': expected an array, found string"),
        Mistake(
            id: "duplicate-plugin",
            manifest: """
                {
                  "app": "myapp",
                  "plugins": [
                    {"name": "profile", "command": ["python3", "profile.py"]},
                    {"name": "profile", "command": ["python3", "settings.py"]}
                  ]
                }
                """,
            error: "myapp/switchyard.json:5:14: error: plugin name 'profile' is used twice"),
    ]

    @Test(
        "a manifest mistake (unknown key, JSON syntax, wrong type, a name used twice) is status 65 and an error at its file, line and column, with the line and a caret, no usage text and no byte offset",
        arguments: mistakes)
    func manifestMistake(_ mistake: Mistake) async throws {
        let error = try await Self.refused(mistake.manifest, status: 65)
        #expect(error.hasPrefix(mistake.error), "\(error)")
        #expect(!error.contains("byte"))
        try Troubleshooting.check(mistake.id, error)
    }

    @Test("unknown keys in nested objects are all reported, in file order; --allow-unknown-keys makes them warnings")
    func unknownKeys() async throws {
        // A key with no near neighbour lists the known ones.
        let nested = try await Self.refused(
            """
            {"app": "myapp", "plugins": [
              {"name": "todos", "product": "DemoTodos", "restart": {"policy": "transient", "maxRestart": 3}, "colour": "red"}
            ]}
            """, status: 65)
        #expect(
            nested.hasPrefix(
                "myapp/switchyard.json:2:80: error: unknown key 'maxRestart' in plugins[0].restart ('todos'); did you mean 'maxRestarts'?"
            ))
        #expect(
            nested.contains(
                "myapp/switchyard.json:2:98: error: unknown key 'colour' in plugins[0] ('todos') (known keys: name, product, command"
            ))
        #expect(nested.contains("--allow-unknown-keys ignores keys this version does not know"))

        // Forward compatibility: the same kind of manifest (extending the demo) starts, with a warning saying where.
        let directory = try Self.myapp(
            #"{"app": "myapp", "colour": "red", "extends": "\#(packageRoot)/Plugins/demo/switchyard.json"}"#)
        try "expect root unauthenticated\n".write(toFile: directory + "/try.txt", atomically: true, encoding: .utf8)
        let allowed = try await runSwitchyard(
            [
                "run", "--manifest", "myapp/switchyard.json", "--allow-unknown-keys", "--script", "try.txt",
                "--no-socket",
            ], in: directory)
        #expect(allowed.status == 0, "\(allowed.errorText)")
        #expect(
            allowed.stderr.first
                == "myapp/switchyard.json:1:18: warning: unknown key 'colour' in the manifest ignored (--allow-unknown-keys)"
        )
    }

    @Test("a name used twice shows both places; replacing an inherited plugin through 'extends' is not a duplicate")
    func duplicatePlugin() async throws {
        let mistake = try #require(Self.mistakes.first { $0.id == "duplicate-plugin" })
        let error = try await Self.refused(mistake.manifest, status: 65)
        #expect(error.contains("myapp/switchyard.json:4:14: note: 'profile' is first used here"))

        let manifest = try Manifest.load(
            path: try Self.myapp(
                #"{"extends": "\#(packageRoot)/Plugins/demo/switchyard.json", "plugins": [{"name": "profile", "command": ["true"]}]}"#
            ) + "/myapp/switchyard.json")
        #expect(manifest.plugins.filter { $0.name == "profile" }.map(\.command) == [["true"]])
    }

    @Test(
        "a missing manifest is status 66; without --manifest the demo is found from a subfolder of the checkout, and outside one the error says where it looked"
    )
    func defaultManifest() async throws {
        let directory = try Self.myapp("{}")
        let missing = try await runSwitchyard(["run", "--manifest", "myapp/switchyard.jsn"], in: directory)
        #expect(missing.status == 66)
        #expect(missing.errorText == "myapp/switchyard.jsn: error: no such manifest (ENOENT)")

        let outside = try await runSwitchyard(["run"], in: "/tmp")
        #expect(outside.status == 66)
        #expect(outside.stdout.isEmpty)
        #expect(outside.errorText.contains("looked for Plugins/demo/switchyard.json in /tmp, /"))
        try Troubleshooting.check("no-manifest", outside.errorText)

        // Past the nested package of the external plugin, up to the checkout (as `swift` finds its package).
        let inside = packageRoot + "/Plugins/external/ProfilePlugin"
        try "expect root unauthenticated\n".write(toFile: directory + "/try.txt", atomically: true, encoding: .utf8)
        let found = try await runSwitchyard(["run", "--script", directory + "/try.txt", "--no-socket"], in: inside)
        #expect(found.status == 0, "\(found.errorText)")
        #expect(found.errorText.contains("switchyard: ready (6/6 plugins"))
    }

    @Test(
        "a product that is not built: the plugin is unavailable with the command that builds it; the app cannot start without its root (69)"
    )
    func productNotBuilt() async throws {
        let result = try await Self.refused(
            """
            {
              "app": "myapp",
              "root": {"plugin": "profile", "type": "profile"},
              "plugins": [{"name": "profile", "product": "ProfilePlugin"}]
            }
            """, status: 69)
        let line = try #require(result.split(separator: "\n").first.map(String.init))
        #expect(line.contains("(build it with `swift build --product ProfilePlugin`)"))
        #expect(
            result.contains(
                "switchyard: error: the app cannot start: its root plugin 'profile' did not start (the error above)"))
        #expect(!result.contains("compositionError"), "the cause is the product, not the composition")
        try Troubleshooting.check(
            "product-not-built", line, replacing: [(productsDirectory, "/home/me/switchyard/.build/debug")])
    }

    /// A script the kernel would refuse, or that `execvp` would hand to /bin/sh, and what the error must say.
    struct BadExecutable: Sendable, CustomTestStringConvertible {
        let id: String
        let bytes: [UInt8]
        let executable: Bool
        let says: String
        var testDescription: String { id }
    }

    static let badExecutables = [
        BadExecutable(
            id: "byte-order mark", bytes: [0xEF, 0xBB, 0xBF] + Array("#!/usr/bin/env python3\nprint(1)\n".utf8),
            executable: true, says: "starts with a UTF-8 byte-order mark"),
        BadExecutable(
            id: "CRLF shebang", bytes: Array("#!/usr/bin/env python3\r\nprint(1)\r\n".utf8), executable: true,
            says: "Windows line ending (CRLF) on its `#!` line"),
        BadExecutable(
            id: "missing interpreter", bytes: Array("#!/usr/bin/python9\nprint(1)\n".utf8), executable: true,
            says: "names /usr/bin/python9, which does not exist"),
        BadExecutable(
            id: "env of a missing program", bytes: Array("#!/usr/bin/env python9\nprint(1)\n".utf8), executable: true,
            says: "runs `env python9`, and python9 is not in the PATH"),
        BadExecutable(
            id: "no execute bit", bytes: Array("#!/usr/bin/env python3\nprint(1)\n".utf8), executable: false,
            says: "is not executable (no execute permission): `chmod +x"),
        BadExecutable(
            id: "no shebang", bytes: Array("print(1)\n".utf8), executable: true,
            says: "has no `#!` line and is not a compiled program: it would be run by /bin/sh"),
    ]

    @Test(
        "a script that cannot start as a program is named for what it is, at the manifest's command, once; nothing runs it through a shell",
        arguments: badExecutables)
    func badExecutable(_ bad: BadExecutable) async throws {
        let directory = try Self.myapp(
            """
            {
              "app": "myapp",
              "root": {"plugin": "main", "type": "main"},
              "plugins": [{"name": "main", "command": ["./main.py"]}]
            }
            """)
        // A shell running the file would create this (the BOM case once started another app from a docstring).
        let marker = directory + "/myapp/ran"
        let script = directory + "/myapp/main.py"
        try FileSystem.createFile(
            script, bad.bytes + Array("\n`touch \(marker)`\n".utf8), mode: bad.executable ? 0o755 : 0o644)
        let result = try await runSwitchyard(
            ["run", "--manifest", "myapp/switchyard.json", "--no-socket", "--script", "/dev/null"], in: directory)
        #expect(result.status == 69, "\(result.errorText)")
        let lines = result.errorText.split(separator: "\n").map(String.init)
        // Said once (a loaded machine may add a line about the loop's lag; that is not this failure).
        #expect(lines.filter { $0.contains("main.py") }.count == 1, "\(result.errorText)")
        #expect(lines.filter { $0.contains("error") }.count == 2, "\(result.errorText)")
        #expect(!result.errorText.contains("compositionError"), "\(result.errorText)")
        let cause = try #require(lines.first { $0.contains("cannot be started") })
        #expect(cause.contains("myapp/switchyard.json:4:44: error: plugin 'main' cannot be started: "), "\(cause)")
        #expect(cause.contains(bad.says), "\(cause)")
        #expect(
            lines.last
                == "switchyard: error: the app cannot start: its root plugin 'main' did not start (the error above)")
        #expect(!FileSystem.exists(marker), "the script was run by a shell")
    }

    @Test("a root naming a plugin the manifest does not declare is an error at its place, with a did-you-mean (65)")
    func rootTypo() async throws {
        let error = try await Self.refused(
            """
            {
              "app": "myapp",
              "root": {"plugin": "mian", "type": "main"},
              "plugins": [{"name": "main", "command": ["python3", "main.py"]}]
            }
            """, status: 65)
        #expect(
            error.hasPrefix(
                "myapp/switchyard.json:3:22: error: the root names plugin 'mian', which the manifest does not declare; did you mean 'main'?"
            ), "\(error)")
    }

    @Test("a plugin stopped for a slow start names startTimeoutMs and its value")
    func slowStart() async throws {
        let directory = try Self.myapp(
            """
            {
              "app": "myapp",
              "root": {"plugin": "slow", "type": "lab"},
              "plugins": [{"name": "slow", "command": ["\(productsDirectory)/misbehave", "--hang-in-handshake"], "startTimeoutMs": 300}]
            }
            """)
        let result = try await runSwitchyard(
            ["run", "--manifest", "myapp/switchyard.json", "--no-socket", "--script", "/dev/null"], in: directory)
        #expect(result.status == 69, "\(result.errorText)")
        #expect(result.errorText.contains("within 300 ms (the manifest entry's startTimeoutMs"), "\(result.errorText)")
    }

    @Test("--state in a missing or read-only folder refuses the start (73) with the reason, unless --state-optional")
    func stateFolder() async throws {
        let directory = try TestSweep.temporaryDirectory()
        let demo = packageRoot + "/Plugins/demo/switchyard.json"
        let refused = try await runSwitchyard(
            ["run", "--manifest", demo, "--state", "state/tree.json", "--socket", "\(directory)/app.sock"],
            in: directory)
        #expect(refused.status == 73)
        #expect(refused.stdout.isEmpty)
        #expect(!FileSystem.exists("\(directory)/state"))
        #expect(!FileSystem.exists("\(directory)/app.sock"))
        try Troubleshooting.check("state-folder", refused.errorText)

        try "expect root unauthenticated\n".write(toFile: directory + "/try.txt", atomically: true, encoding: .utf8)
        let optional = try await runSwitchyard(
            [
                "run", "--manifest", demo, "--state", "state/tree.json", "--state-optional", "--script", "try.txt",
                "--no-socket",
            ], in: directory)
        #expect(optional.status == 0, "\(optional.errorText)")
        #expect(
            optional.errorText.contains(
                "WARNING running without persistence (--state-optional): cannot keep the state in state/tree.json: the folder state does not exist"
            ))
        #expect(!FileSystem.exists("\(directory)/state"))
    }

    @Test("a folder at the --state path is set aside as §17 says, and the app starts with a fresh tree")
    func stateIsFolder() async throws {
        let directory = try TestSweep.temporaryDirectory()
        try FileSystem.makeDirectory(directory + "/tree.json", mode: 0o755)
        try "expect root unauthenticated\n".write(toFile: directory + "/try.txt", atomically: true, encoding: .utf8)
        let run = try await runSwitchyard(
            [
                "run", "--manifest", packageRoot + "/Plugins/demo/switchyard.json", "--state", "tree.json",
                "--script", "try.txt", "--no-socket",
            ], in: directory)
        #expect(run.status == 0, "\(run.errorText)")
        #expect(
            run.errorText.contains("the state file tree.json cannot be used (")
                && run.errorText.contains("a folder") && run.errorText.contains("moved to tree.json.corrupt-")
                && run.errorText.contains("starting from a fresh tree"), "\(run.errorText)")
        // The folder is kept for inspection beside the file the app now writes.
        let names = FileSystem.listDirectory(directory)
        #expect(names.contains { $0.hasPrefix("tree.json.corrupt-") })
        #expect(FileSystem.exists(directory + "/tree.json") && !FileSystem.isDirectory(directory + "/tree.json"))
    }

    @Test(
        "--state in a read-only folder refuses the start (73), naming EACCES",
        .enabled(
            if: getuid() != 0 || FileSystem.exists("/usr/bin/setpriv"),
            "as root, needs setpriv to run as a user a folder's mode binds"))
    func stateFolderReadOnly() async throws {
        // Readable by anyone (the manifest, the binary), writable by no one but root.
        let directory = try TestSweep.temporaryDirectory(mode: 0o755)
        try FileSystem.makeDirectory(directory + "/ro", mode: 0o555)
        try FileSystem.setPermissions(directory + "/ro", 0o555)
        try #"{"app": "ro", "plugins": []}"#.write(toFile: directory + "/m.json", atomically: true, encoding: .utf8)
        try FileSystem.setPermissions(directory + "/m.json", 0o644)
        var command = [
            "run", "--manifest", directory + "/m.json", "--state", directory + "/ro/tree.json", "--no-socket",
        ]
        var executable = product("switchyard")
        if getuid() == 0 {
            let binary = directory + "/switchyard"
            // Under the spawn lock, so no child forked meanwhile holds the copy open for writing (ETXTBSY at its exec).
            try SpawnLock.withLock { try FileManager.default.copyItem(atPath: product("switchyard"), toPath: binary) }
            try FileSystem.setPermissions(binary, 0o755)
            command = ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + command
            executable = "/usr/bin/setpriv"
        }
        let process = try CLIProcess(command, executable: executable, currentDirectory: directory)
        process.closeStdin()
        #expect(try await process.waitForExit() == 73)
        #expect(
            process.stderr.first
                == "switchyard: error: cannot keep the state in \(directory)/ro/tree.json: the folder \(directory)/ro is not writable (EACCES)"
        )
        #expect(FileSystem.listDirectory(directory + "/ro").isEmpty)
    }
}
