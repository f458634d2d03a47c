import Foundation
import Glibc
import Logging
import SwitchyardClient
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Protocol/README.md §7 walked row by row: each code is produced through the real host and real plugin processes,
/// and its `data` carries what the table's last column promises. The table itself is read from the spec, so a row
/// added there without a way to produce it here fails.
@Suite("§7 error codes through the real host", .heavy, .timeLimit(.minutes(2)))
struct ErrorTableTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let code: Int
        let name: String
        /// The `data` members the row promises.
        let fields: [String]
        var testDescription: String { "\(code) \(name)" }
    }

    /// The rows of the §7 table: `| code | name | meaning | data |`.
    static func rows() throws -> [Row] {
        let spec = String(decoding: try FileSystem.readFile("\(packageRoot)/Protocol/README.md"), as: UTF8.self)
        let section =
            spec.components(separatedBy: "## 7. Errors").dropFirst().first?.components(separatedBy: "## 8.").first ?? ""
        return section.split(separator: "\n").compactMap { line -> Row? in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count == 6, let code = Int(cells[1]) else { return nil }
            let fields = cells[4].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            return Row(code: code, name: cells[2], fields: fields)
        }
    }

    @Test("the §7 table lists exactly the codes the protocol module defines, by number and name")
    func tableMatchesCodes() throws {
        let rows = try Self.rows()
        #expect(rows.map(\.code) == ErrorCode.all.map(\.rawValue))
        #expect(rows.map(\.name) == ErrorCode.all.map(\.name))
    }

    @Test(
        "every row of §7 is produced through the real host, with the data the row promises",
        arguments: (try? rows()) ?? [])
    func row(_ row: Row) async throws {
        let code = ErrorCode(rawValue: row.code)
        guard let produced = try await Self.produce(row) else {
            // Only a client of another user cannot be made everywhere (it needs root); CLITests covers it there too.
            #expect(code == .unauthorized, "no way to produce \(row.testDescription)")
            return
        }
        #expect(produced.code == code, "\(row.testDescription): got \(produced)")
        for field in row.fields {
            #expect(
                produced.data?[field] != nil, "\(row.testDescription): data lacks '\(field)': \(produced.data ?? .null)"
            )
        }
    }

    // MARK: - Producing each code

    static let lab = CoordinatorReference(plugin: "lab", type: "lab")

    /// A host whose root is misbehave's "lab" stack (root `bench`; routes `sample`, `sheet`, `fault`).
    static func withLab<T: Sendable>(
        _ arguments: [String] = [], limits: LimitOverrides? = nil, extra: [PluginManifest] = [], socket: String? = nil,
        logs: LogCapture = LogCapture(), _ body: @Sendable (HostHandle) async throws -> T
    ) async throws -> T {
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.controlSocket = socket
        return try await withHost(
            [TestPlugins.misbehave("lab", arguments, limits: limits)] + extra, root: lab, options: options, logs: logs,
            body)
    }

    static func socketPath() throws -> String { try TestSweep.temporaryDirectory() + "/control.sock" }

    /// What `call` refused with on a lab host (nil if it succeeded).
    static func refusal(
        _ arguments: [String] = [], limits: LimitOverrides? = nil,
        _ call: @escaping @Sendable (HostHandle) async throws(ResponseError) -> Void
    ) async throws -> ResponseError? {
        try await withLab(arguments, limits: limits) { host in
            do throws(ResponseError) { try await call(host) } catch { return error }
            return nil
        }
    }

    static func produce(_ row: Row) async throws -> ResponseError? {
        let code = ErrorCode(rawValue: row.code)
        switch code {
        case .parseError, .invalidRequest, .methodNotFound, .shuttingDown:
            return try await overSocket(code)
        case .invalidParams:
            return try await refusal { host throws(ResponseError) in
                _ = try await host.navigate([NavigationStep(op: .route)])
            }
        case .internalError, .rejectedByGuard:
            return try await refusal(["--refuse", "sheet=\(code.rawValue)"]) { host throws(ResponseError) in
                _ = try await host.navigate([.route("sheet")])
            }
        case .timeout:
            var limits = LimitOverrides()
            limits.requestTimeoutMs = 1_000
            return try await refusal(["--trigger-route", "fault", "--hang-after", "1"], limits: limits) {
                host throws(ResponseError) in
                _ = try await host.navigate([.route("fault")])
            }
        case .pluginUnavailable:
            return try await refusal(["--trigger-route", "fault", "--crash-after", "1"]) { host throws(ResponseError) in
                _ = try await host.navigate([.route("fault")])
            }
        case .limitExceeded:
            return try await refusal { host throws(ResponseError) in
                _ = try await host.navigate(Array(repeating: .popLast, count: 257))
            }
        case .invalidAnswer:
            // The route declares it opens a coordinator; misbehave answers every route with a screen.
            let table =
                #"[{"type": "lab", "kind": "stack", "initialRoute": "bench", "routes": [{"name": "bench", "transition": "root"}, "#
                + #"{"name": "away", "transition": "modal", "target": {"type": "lab"}}]}]"#
            return try await refusal(["--route-table", table]) { host throws(ResponseError) in
                _ = try await host.navigate([.route("away")])
            }
        case .routeNotFound:
            return try await refusal { host throws(ResponseError) in _ = try await host.navigate([.route("teleport")]) }
        case .notAllowed:
            return try await refusal { host throws(ResponseError) in
                let root = await host.snapshot().instances.first?.root?.entry ?? EntryID(0)
                _ = try await host.userDismissed(instance: InstanceID(1), entry: root)
            }
        case .instanceNotFound:
            return try await refusal { host throws(ResponseError) in
                _ = try await host.navigate(from: InstanceID(999), [.popLast])
            }
        case .deepLinkInvalid:
            return try await refusal { host throws(ResponseError) in _ = try await host.open("switchyard://nowhere") }
        case .notOwner:
            return try await notOwner()
        case .notInitialized:
            return try await notInitialized(promising: row.fields)
        case .unsupportedProtocolVersion:
            return try await withLab(extra: [TestPlugins.misbehave("old", ["--speaks", "2"])]) { host in
                await host.status().first { $0.name == "old" }?.error
            }
        case .conflict:
            return try await conflict()
        case .compositionError:
            // No initialRoute: the strict manifest refuses to start.
            let table = #"[{"type": "lab", "kind": "stack", "routes": [{"name": "bench", "transition": "root"}]}]"#
            let plugins = [
                TestPlugins.misbehave("lab", []), TestPlugins.misbehave("broken", ["--route-table", table]),
            ]
            let manifest = Manifest(app: "strict", root: lab, strict: true, plugins: plugins, directory: packageRoot)
            let options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
            do {
                let host = try await HostHandle.start(
                    manifest: manifest, options: options, logger: .init(label: "strict"))
                await host.shutdown()
                return nil
            } catch let error as ResponseError {
                return error
            }
        case .unauthorized:
            return try await unauthorized()
        default:
            return nil
        }
    }

    /// Codes a control client gets for what it writes on the socket itself.
    static func overSocket(_ code: ErrorCode) async throws -> ResponseError? {
        let path = try socketPath()
        return try await withLab(socket: path) { _ in
            let client = try ControlClient(path: path, timeoutMilliseconds: Int32(defaultTimeout * 1_000))
            defer { client.close() }
            switch code {
            case .parseError:
                try client.sendRaw("this is not json\n")
            case .invalidRequest:
                try client.sendRaw(#"{"jsonrpc": "1.0", "id": 1, "method": "tree/get"}"# + "\n")
            case .methodNotFound:
                if case .failure(let error) = try client.response("no/such/method") { return error }
                return nil
            default:
                // The host begins to stop at the first line and reads the second in the same pass.
                try client.sendRaw(
                    #"{"jsonrpc": "2.0", "id": 1, "method": "host/shutdown"}"# + "\n"
                        + #"{"jsonrpc": "2.0", "id": 2, "method": "navigate", "params": {"steps": [{"op": "popLast"}]}}"#
                        + "\n")
                guard case .response(.number(1), _) = try client.next() else { return nil }
            }
            guard case .errorResponse(_, let error) = try client.next() else { return nil }
            return error
        }
    }

    /// A plugin (misbehave "intruder", when pinged) navigating an instance of another plugin.
    static func notOwner() async throws -> ResponseError? {
        let logs = LogCapture()
        // No heartbeat: a heartbeat ping during a slow start-up would make it navigate before the root exists.
        var quiet = LimitOverrides()
        quiet.heartbeatIntervalMs = 0
        let intruder = TestPlugins.misbehave(
            "intruder", ["--navigate-on-ping", #"{"instance": 1, "steps": [{"op": "popLast"}]}"#], limits: quiet)
        return try await withLab(extra: [intruder], logs: logs) { host in
            _ = try await host.ping("intruder")
            try await logs.waitFor("misbehave: navigate answered")
            let line = logs.all.first { $0.contains("misbehave: navigate answered") } ?? ""
            let answer = try JSONParser.parse(String(line.components(separatedBy: "navigate answered ").last ?? ""))
            return answer["error"].flatMap(ResponseError.init(json:))
        }
    }

    /// Runs the transcript-replayer with `lines` as the plugin; `body` drives the host.
    static func withReplayer<T: Sendable>(
        _ lines: [JSONValue], root: String?, logs: LogCapture, _ body: @Sendable (HostHandle) async throws -> T
    ) async throws -> T {
        let text = lines.map { JSONWriter.string($0) }.joined(separator: "\n")
        let plugin = PluginManifest(
            name: "replay", product: "transcript-replayer", args: [text], startTimeoutMs: 5_000,
            restart: RestartPolicy(policy: .temporary))
        let result = try await withHost(
            [plugin], root: root.map { CoordinatorReference(plugin: "replay", type: $0) }, logs: logs, body)
        #expect(!logs.contains("MISMATCH"), "\(logs.all.filter { $0.contains("MISMATCH") })")
        return result
    }

    static func handshake(_ coordinators: JSONValue) -> [JSONValue] {
        [
            ["host": ["jsonrpc": "2.0", "id": 1, "method": "initialize"]],
            [
                "plugin": [
                    "jsonrpc": "2.0", "id": 1,
                    "result": [
                        "protocolVersion": 1, "plugin": ["name": "replay", "version": "1.0.0"],
                        "coordinators": coordinators,
                    ],
                ]
            ],
            ["host": ["jsonrpc": "2.0", "method": "initialized"]],
        ]
    }

    /// A plugin's request before its handshake is answered -32001. The plugin (the replayer) checks the answer
    /// against a pattern with the row's fields, and the test returns that pattern once it matched.
    static func notInitialized(promising fields: [String]) async throws -> ResponseError? {
        let logs = LogCapture()
        var data = JSONObject()
        for field in fields { data[field] = "$any" }
        let expected = ResponseError(.notInitialized, "$any", data: .object(data))
        let lines: [JSONValue] = [
            ["host": ["jsonrpc": "2.0", "id": 1, "method": "initialize"]],
            [
                "plugin": [
                    "jsonrpc": "2.0", "id": "early", "method": "navigate", "params": ["steps": [["op": "popLast"]]],
                ]
            ],
            ["host": ["jsonrpc": "2.0", "id": "early", "error": expected.json]],
            [
                "plugin": [
                    "jsonrpc": "2.0", "id": 1,
                    "result": [
                        "protocolVersion": 1, "plugin": ["name": "replay", "version": "1.0.0"], "coordinators": [],
                    ],
                ]
            ],
            ["host": ["jsonrpc": "2.0", "method": "initialized"]],
        ]
        try await withReplayer(lines, root: nil, logs: logs) { _ in
            try await logs.waitFor("transcript-replayer: complete")
        }
        return logs.contains("MISMATCH") ? nil : expected
    }

    /// A chain whose instance another chain changes while it waits for its plugin, four times in a row (the first run
    /// and three retries): -32016. The replayer holds each answer until the other chain's `coordinator/dismissed`
    /// has arrived.
    static func conflict() async throws -> ResponseError? {
        let logs = LogCapture()
        var lines = handshake([
            [
                "type": "app", "kind": "stack", "initialRoute": "start",
                "routes": [
                    ["name": "start", "transition": "root"], ["name": "page", "transition": "push"],
                    ["name": "slow", "transition": "push"],
                ],
            ]
        ])
        lines.append(["host": ["jsonrpc": "2.0", "id": 2, "method": "coordinator/create"]])
        lines.append([
            "plugin": [
                "jsonrpc": "2.0", "id": 2,
                "result": ["root": ["route": "start", "content": ["screen": ["name": "Start"]]]],
            ]
        ])
        for id in 3...6 {
            lines.append([
                "host": [
                    "jsonrpc": "2.0", "id": .int(Int64(id)), "method": "coordinator/route", "params": ["route": "page"],
                ]
            ])
            lines.append([
                "plugin": [
                    "jsonrpc": "2.0", "id": .int(Int64(id)), "result": ["content": ["screen": ["name": "Page"]]],
                ]
            ])
        }
        for attempt in 1...4 {
            let id = JSONValue.int(Int64(6 + attempt))
            lines.append([
                "host": ["jsonrpc": "2.0", "id": id, "method": "coordinator/route", "params": ["route": "slow"]]
            ])
            lines.append(["sync": .string("asked-\(attempt)")])
            lines.append(["host": ["jsonrpc": "2.0", "method": "coordinator/dismissed", "params": ["route": "page"]]])
            lines.append(["plugin": ["jsonrpc": "2.0", "id": id, "result": ["content": ["screen": ["name": "Slow"]]]]])
        }
        return try await withReplayer(lines, root: "app", logs: logs) { host in
            _ = try await host.navigate(Array(repeating: .route("page"), count: 4))
            let slow = Task { () -> ResponseError? in
                do throws(ResponseError) { _ = try await host.navigate([.route("slow")]) } catch { return error }
                return nil
            }
            for attempt in 1...4 {
                try await logs.waitFor("transcript-replayer: sync asked-\(attempt)")
                _ = try await host.navigate([.popLast])
            }
            return await slow.value
        }
    }

    /// A raw client running as nobody is refused at once (needs root and setpriv; nil elsewhere).
    static func unauthorized() async throws -> ResponseError? {
        guard getuid() == 0, FileSystem.exists("/usr/bin/setpriv"), FileSystem.isExecutable("/usr/bin/python3") else {
            return nil
        }
        // A folder anyone may traverse, so that only the uid check stands in the way once the socket is opened up.
        let path = try TestSweep.temporaryDirectory(mode: 0o755) + "/lab.sock"
        return try await withLab(socket: path) { _ in
            try FileSystem.setPermissions(path, 0o666)
            let client = try CLIProcess(
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                    "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(65536).decode())",
                    path,
                ],
                executable: "/usr/bin/setpriv")
            client.closeStdin()
            _ = try await client.waitForExit()
            let line = client.stdout.first { $0.hasPrefix("{") } ?? ""
            return try JSONParser.parse(line)["error"].flatMap(ResponseError.init(json:))
        }
    }
}
