import SwitchyardConformance
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// `switchyard check-plugin` through the real CLI, against the real plugin executables: every bundled plugin passes,
/// and each fault of the misbehaving plugin fails exactly the checks it breaks.
@Suite("switchyard check-plugin", .heavy, .timeLimit(.minutes(3)))
struct CheckPluginTests {
    /// What one run printed, with the report parsed from `--json`.
    struct Run {
        let status: Int32
        let stdout: [String]
        let stderr: [String]

        func report() throws -> JSONValue {
            try JSONParser.parse(stdout.joined(separator: "\n"))
        }

        func ids(_ status: String) throws -> Set<String> {
            let checks = try report()["checks"]?.arrayValue ?? []
            return Set(checks.filter { $0["status"]?.stringValue == status }.compactMap { $0["id"]?.stringValue })
        }

        var transcript: String { (stdout + ["stderr:"] + stderr).joined(separator: "\n") }
    }

    static func check(_ arguments: [String]) async throws -> Run {
        let process = try CLIProcess(["check-plugin"] + arguments)
        process.closeStdin()
        // The slowest mode waits 2 s for a plugin that ignores end of file; every wait inside is bounded.
        let status = try await process.waitForExit(seconds: max(defaultTimeout, 60))
        return Run(status: status, stdout: process.stdout, stderr: process.stderr)
    }

    static let demo = "Plugins/demo/switchyard.json"

    /// Every plugin in the repository: the demo app's six (Swift, Python, Node) through their manifest entries, the
    /// three hello plugins, the misbehaving plugin with no fault, and the shell plugin written from the spec alone.
    static let bundled: [[String]] = [
        ["--manifest-entry", "\(demo):main"],
        ["--manifest-entry", "\(demo):unauthenticated"],
        ["--manifest-entry", "\(demo):authenticated"],
        ["--manifest-entry", "\(demo):todos"],
        ["--manifest-entry", "\(demo):projects"],
        ["--manifest-entry", "\(demo):profile"],
        ["--", product("HelloPlugin")],
        ["--", TestPlugins.python, "Plugins/python/hello.py"],
        ["--", TestPlugins.node, "Plugins/node/hello.js"],
        ["--", product("misbehave")],
        ["--", "sh", "Plugins/shell/notes.sh"],
    ]

    @Test("every bundled plugin passes every check", arguments: bundled)
    func bundledPluginPasses(_ arguments: [String]) async throws {
        let run = try await Self.check(["--json"] + arguments)
        #expect(try run.ids("FAIL") == [], "\(run.transcript)")
        #expect(run.status == 0, "\(run.transcript)")
        #expect(
            try run.ids("PASS").isSuperset(of: [
                "handshake", "version-negotiation", "route-table", "create", "destroy", "stdout", "shutdown", "eof",
            ]))
    }

    /// A misbehaving mode and the checks it must fail (and only those).
    struct Mode: CustomTestStringConvertible, Sendable {
        let flags: [String]
        let fails: Set<String>
        var warns: Set<String> = []
        var limits: String?
        var testDescription: String { flags.joined(separator: " ") }
    }

    static let modes: [Mode] = [
        Mode(flags: ["--print-after", "1", "--trigger-route", "sheet"], fails: ["stdout"]),
        Mode(flags: ["--answer-version", "1"], fails: ["version-negotiation"]),
        Mode(
            flags: ["--oversize-after", "1", "--trigger-route", "sheet", "--oversize-bytes", "2000000"],
            fails: ["line-limit"]),
        Mode(flags: ["--ignore-eof"], fails: ["eof"]),
        Mode(flags: ["--exit-code", "0"], fails: ["exit-without-shutdown"]),
        Mode(flags: ["--answer-unknown-methods"], fails: ["unknown-method"]),
        Mode(flags: ["--reject-unknown-members"], fails: ["unknown-members"]),
        Mode(flags: ["--wrong-content", "sheet"], fails: ["route"]),
        Mode(flags: ["--exit-in-handshake", "3"], fails: ["handshake", "version-negotiation"]),
        Mode(
            flags: ["--route-table", #"[{"type":"lab","kind":"stack","routes":[{"name":"a","transition":"push"}]}]"#],
            fails: ["route-table"]),
        // A tabs type answered with a stack's root.
        Mode(
            flags: [
                "--route-table", #"[{"type":"lab","kind":"tabs","routes":[{"name":"first","transition":"tab"}]}]"#,
            ], fails: ["create"]),
        // A type that resolves its own deep links (customDeepLinks) but does not serve coordinator/deepLink.
        Mode(
            flags: [
                "--route-table",
                #"[{"type":"lab","kind":"stack","initialRoute":"bench","customDeepLinks":true,"routes":[{"name":"bench","transition":"root"},{"name":"sheet","transition":"modal"}]}]"#,
            ], fails: ["deep-link"]),
        Mode(flags: ["--accept-wrong-types"], fails: [], warns: ["param-types"]),
        Mode(flags: ["--refuse-restore"], fails: [], warns: ["restore"]),
        // Limits from a manifest entry: a heartbeat timeout of 300 ms, which a ping stuck behind a 600 ms route misses.
        Mode(flags: ["--slow-route", "sheet:600"], fails: ["ping"], limits: #"{"heartbeatTimeoutMs": 300}"#),
    ]

    @Test("each fault of the misbehaving plugin fails exactly the checks it breaks", arguments: modes)
    func misbehavingModeFails(_ mode: Mode) async throws {
        let arguments: [String]
        if let limits = mode.limits {
            let args = mode.flags.map { "\"\($0)\"" }.joined(separator: ", ")
            let manifest = try temporaryManifest(
                #"{"plugins": [{"name": "lab", "product": "misbehave", "args": [\#(args)], "limits": \#(limits)}]}"#)
            arguments = ["--json", "--manifest-entry", "\(manifest):lab"]
        } else {
            arguments = ["--json", "--", product("misbehave")] + mode.flags
        }
        let run = try await Self.check(arguments)
        #expect(try run.ids("FAIL") == mode.fails, "\(run.transcript)")
        #expect(try run.ids("WARN") == mode.warns, "\(run.transcript)")
        #expect(run.status == (mode.fails.isEmpty ? 0 : 1), "\(run.transcript)")
    }

    @Test("a failure names the spec section, shows the lines sent and received, and what was expected")
    func reportShowsTheExchange() async throws {
        let run = try await Self.check(["--", product("misbehave"), "--print-after", "1", "--trigger-route", "sheet"])
        #expect(run.status == 1)
        let text = run.stdout.joined(separator: "\n")
        let failure = try #require(run.stdout.firstIndex { $0.hasPrefix("FAIL") }, "\(run.transcript)")
        #expect(run.stdout[failure].contains("stdout") && run.stdout[failure].contains("§1, §4"), "\(run.transcript)")
        #expect(text.contains("is not a protocol message"), "\(run.transcript)")
        #expect(text.contains("expected: only JSON-RPC messages on stdout"), "\(run.transcript)")
        #expect(text.contains(#"→ {"jsonrpc":"2.0","id":"#) && text.contains(#""route":"sheet""#), "\(run.transcript)")
        #expect(text.contains("← Hello from user code! debug value = 42"), "\(run.transcript)")
        #expect(run.stdout.last?.hasPrefix("19 checks:") == true, "\(run.transcript)")
        #expect(run.stdout.contains { $0.hasPrefix("PASS  handshake") && $0.contains("§3.1") })
    }

    @Test("--json prints one JSON document on stdout and nothing on stderr; --only runs only what it names")
    func jsonAndOnly() async throws {
        let run = try await Self.check([
            "--json", "--only", "handshake,eof,unknown-method", "--", TestPlugins.python, "Plugins/python/hello.py",
        ])
        #expect(run.status == 0, "\(run.transcript)")
        #expect(run.stdout.count == 1, "\(run.transcript)")
        #expect(run.stderr.isEmpty, "\(run.transcript)")
        let report = try run.report()
        #expect(report["passed"] == true)
        #expect(report["plugin"]?["name"] == "hello-python")
        let checks = try #require(report["checks"]?.arrayValue)
        #expect(checks.compactMap { $0["id"]?.stringValue } == ["handshake", "unknown-method", "eof"])
        #expect(checks.allSatisfy { $0["section"]?.stringValue?.hasPrefix("§") == true && $0["status"] == "PASS" })

        let wrong = try await Self.check([
            "--only", "handshake,telepathy", "--", TestPlugins.python, "Plugins/python/hello.py",
        ])
        #expect(wrong.status != 0)
        #expect(wrong.stderr.joined().contains("no check 'telepathy'"), "\(wrong.transcript)")
    }

    @Test("a command that cannot start fails the handshake with the reason, and nothing else runs")
    func missingCommand() async throws {
        let run = try await Self.check(["--json", "--", "/nonexistent/plugin"])
        #expect(run.status == 1)
        #expect(try run.ids("FAIL") == ["handshake"], "\(run.transcript)")
        #expect(try run.ids("PASS") == [], "\(run.transcript)")
    }

    @Test(
        "the schemas built into the checker are the ones in Protocol/schema (run Tests/embed-schemas.py after a change)"
    )
    func embeddedSchemasMatchTheFiles() throws {
        let directory = "\(packageRoot)/Protocol/schema"
        let files = FileSystem.listDirectory(directory).filter { $0.hasSuffix(".json") }
        #expect(Set(EmbeddedSchemas.documents.keys) == Set(files))
        for file in files {
            let onDisk = try JSONParser.parse(try FileSystem.readFile("\(directory)/\(file)"))
            let embedded = try JSONParser.parse(EmbeddedSchemas.documents[file] ?? "")
            #expect(onDisk == embedded, "\(file) differs from its embedded copy")
        }
    }
}
