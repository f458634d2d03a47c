import Foundation
import SwitchyardClient
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import SwitchyardSpec
import Synchronization
import Testing

/// Every `Protocol/transcripts/*.jsonl` is replayed against the real code, so the spec cannot drift from it.
@Suite("Protocol transcripts", .heavy, .timeLimit(.minutes(1)))
struct TranscriptTests {
    static let directory = "\(packageRoot)/Protocol/transcripts"

    struct Header: Sendable {
        let replay: String
        let drive: [String]
        let expectFailure: Int?
        /// Host replays: the replayer's coordinator type that is the tree's root, if any.
        let root: String?
        /// Plugin replays: the plugins it applies to.
        let plugins: [String]
    }

    static func load(_ name: String) throws -> (text: String, header: Header, transcript: Transcript) {
        let bytes = try FileSystem.readFile("\(directory)/\(name)")
        let text = String(decoding: bytes, as: UTF8.self)
        let first = try JSONParser.parse(String(text.split(separator: "\n").first ?? ""))
        let header = Header(
            replay: first["replay"]?.stringValue ?? "",
            drive: first["drive"]?.arrayValue?.compactMap { $0.stringValue } ?? [],
            expectFailure: first["expectFailure"]?.intValue.map(Int.init),
            root: first["root"]?.stringValue,
            plugins: first["plugins"]?.arrayValue?.compactMap { $0.stringValue } ?? [])
        return (text, header, try Transcript(parsing: bytes))
    }

    static func transcripts(for replay: String) -> [String] {
        FileSystem.listDirectory(directory).filter { $0.hasSuffix(".jsonl") }.filter {
            (try? load($0).header.replay) == replay
        }
    }

    @Test("every transcript declares how it is replayed")
    func allReplayed() throws {
        let all = FileSystem.listDirectory(Self.directory).filter { $0.hasSuffix(".jsonl") }
        #expect(all.count >= 4)
        for name in all {
            #expect(["host", "plugin", "control"].contains(try Self.load(name).header.replay), "\(name)")
        }
    }

    @Test("replayed against the real host (the replayer plays the plugin)", arguments: transcripts(for: "host"))
    func againstHost(_ name: String) async throws {
        let (text, header, _) = try Self.load(name)
        let logs = LogCapture()
        // Temporary: the replayer exits when its transcript ends, and must not be restarted to replay it again.
        let plugin = PluginManifest(
            name: "replay", product: "transcript-replayer", args: [text], startTimeoutMs: 5_000,
            restart: RestartPolicy(policy: .temporary))
        let root = header.root.map { CoordinatorReference(plugin: "replay", type: $0) }
        try await withHost([plugin], root: root, logs: logs) { host in
            let links = LinkChanges(EventLog(host))
            if let code = header.expectFailure {
                let status = await host.status().first
                #expect(status?.state == .failed)
                #expect(status?.error?.code.rawValue == code, "\(String(describing: status?.error))")
                return
            }
            for item in header.drive {
                let (action, expected) = try Self.split(item)
                guard let answer = try await Self.perform(action, on: host, logs: logs, links: links) else { continue }
                if let expected {
                    #expect(
                        Transcript.mismatch(pattern: expected, actual: answer) == nil,
                        "\(name), drive '\(action)': \(Transcript.mismatch(pattern: expected, actual: answer) ?? ""); the host answered \(answer)"
                    )
                }
            }
        }
        #expect(!logs.contains("MISMATCH"), "\(logs.all.filter { $0.contains("MISMATCH") })")
        if header.expectFailure == nil {
            #expect(logs.contains("transcript-replayer: complete"), "\(logs.all)")
        }
    }

    @Test(
        "replayed as a control client of the demo app (the test plays the client)",
        arguments: transcripts(for: "control"))
    func asControlClient(_ name: String) async throws {
        let (_, _, transcript) = try Self.load(name)
        let path = try TestSweep.temporaryDirectory() + "/control.sock"
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.controlSocket = path
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: options) { _ in
            let client = try ControlClient(path: path, timeoutMilliseconds: 20_000)
            defer { client.close() }
            for step in transcript.steps where step.sync == nil {
                switch step.side {
                case .client:
                    try client.sendRaw(JSONWriter.string(step.message) + "\n")
                case .host, .plugin:
                    let actual = try client.next().json
                    #expect(
                        Transcript.mismatch(pattern: step.message, actual: actual) == nil,
                        "\(name) line \(step.line): \(Transcript.mismatch(pattern: step.message, actual: actual) ?? ""); the host sent \(actual)"
                    )
                }
            }
        }
    }

    /// A drive item: `ACTION` or `ACTION => PATTERN`, where the pattern (`{"result": …}` or `{"error": …}`) is matched
    /// against what the control client got, as a host line is matched against a transcript line.
    static func split(_ item: String) throws -> (action: String, expected: JSONValue?) {
        guard let arrow = item.range(of: " => ") else { return (item, nil) }
        return (String(item[..<arrow.lowerBound]), try JSONParser.parse(String(item[arrow.upperBound...])))
    }

    /// A control call's answer as the wire has it: `{"result": …}` or `{"error": …}`.
    static func answer<T: Encodable>(_ body: () async throws(ResponseError) -> T) async throws -> JSONValue {
        let value: T
        do throws(ResponseError) { value = try await body() } catch { return ["error": error.json] }
        return ["result": try Coding.encode(value)]
    }

    /// Runs one drive action as a control client; returns its answer (`{"result": …}` or `{"error": …}`), or nil for
    /// actions that have none.
    static func perform(
        _ action: String, on host: HostHandle, logs: LogCapture, links: LinkChanges
    ) async throws -> JSONValue? {
        func argument(_ prefix: String) -> String { String(action.dropFirst(prefix.count)) }
        if action == "ping" {
            _ = try await host.ping("replay")
        } else if action.hasPrefix("wait:") {
            try await logs.waitFor("transcript-replayer: sync \(argument("wait:"))")
        } else if action.hasPrefix("open:{") {
            let request = try Coding.decode(OpenRequest.Params.self, from: try JSONParser.parse(argument("open:")))
            return try await Self.answer { () async throws(ResponseError) in try await host.open(request) }
        } else if action.hasPrefix("open:") {
            return try await Self.answer { () async throws(ResponseError) -> NavigateRequest.Result in
                try await host.open(argument("open:"))
            }
        } else if action.hasPrefix("deepLink/cancel:") {
            let request = try Coding.decode(
                DeepLinkCancelRequest.Params.self, from: try JSONParser.parse(argument("deepLink/cancel:")))
            return try await Self.answer { () async throws(ResponseError) in
                DeepLinkCancelRequest.Result(cancelled: try await host.cancelDeepLink(id: request.id))
            }
        } else if action.hasPrefix("deepLink/pending:") {
            return try await Self.answer { () async throws(ResponseError) in
                DeepLinkPendingRequest.Result(pending: try await host.pendingDeepLink())
            }
        } else if action == DeepLinkChangedNotification.method {
            return try Coding.encode(try await links.next())
        } else if action.hasPrefix("validate:") {
            let result = await host.validate(argument("validate:"))
            return ["result": try Coding.encode(result)]
        } else if action.hasPrefix("navigate:") {
            let request = try Coding.decode(
                NavigateRequest.Params.self, from: try JSONParser.parse(argument("navigate:")))
            return try await Self.answer { () async throws(ResponseError) -> NavigateRequest.Result in
                try await host.navigate(from: request.instance, request.steps)
            }
        } else if action.hasPrefix("user/dismissed:") {
            let request = try Coding.decode(
                UserDismissedRequest.Params.self, from: try JSONParser.parse(argument("user/dismissed:")))
            return try await Self.answer { () async throws(ResponseError) -> NavigateRequest.Result in
                try await host.userDismissed(instance: request.instance, entry: request.entry)
            }
        } else if action.hasPrefix("tree/query:") {
            let request = try Coding.decode(
                TreeQueryRequest.Params.self, from: try JSONParser.parse(argument("tree/query:")))
            do throws(ResponseError) { return ["result": ["result": try await host.query(request)]] } catch {
                return ["error": error.json]
            }
        } else if action.hasPrefix("user/action:") {
            let request = try Coding.decode(
                UserActionRequest.Params.self, from: try JSONParser.parse(argument("user/action:")))
            return try await Self.answer { () async throws(ResponseError) -> NavigateRequest.Result in
                try await host.userAction(
                    instance: request.instance, entry: request.entry, action: request.action, params: request.params)
            }
        } else if action.hasPrefix("host/plugins:") {
            return try await Self.answer { () async throws(ResponseError) in try await host.describePlugins() }
        } else if action.hasPrefix("plugin/signal:") {
            let request = try Coding.decode(
                PluginSignalRequest.Params.self, from: try JSONParser.parse(argument("plugin/signal:")))
            return try await Self.answer { () async throws(ResponseError) in
                try await host.injectFault(request.signal, plugin: request.plugin)
            }
        } else if action.hasPrefix("plugin/restart:") {
            let request = try Coding.decode(
                PluginRestartRequest.Params.self, from: try JSONParser.parse(argument("plugin/restart:")))
            return try await Self.answer { () async throws(ResponseError) in
                try await host.restartPlugin(request.plugin)
            }
        } else if action.hasPrefix("plugin/toxics:") {
            let request = try Coding.decode(
                PluginToxicsRequest.Params.self, from: try JSONParser.parse(argument("plugin/toxics:")))
            return try await Self.answer { () async throws(ResponseError) in try await host.setToxics(request) }
        } else if action.hasPrefix("plugin/limits:") {
            let request = try Coding.decode(
                PluginLimitsRequest.Params.self, from: try JSONParser.parse(argument("plugin/limits:")))
            return try await Self.answer { () async throws(ResponseError) in try await host.setLimits(request) }
        } else if action != "shutdown" {
            throw TestFailure("unknown drive action '\(action)'")
        }
        return nil
    }

    /// Plugins a plugin-direction transcript can name: executable and arguments.
    static let pluginCommands: [String: (String, [String])] = [
        "hello-swift": (product("HelloPlugin"), []),
        "hello-python": (TestPlugins.python, ["\(packageRoot)/Plugins/python/hello.py"]),
        "todos": (product("DemoTodos"), []),
        // Release 1.2, which renames a state field and migrates what 1.0 wrote (upgrade.jsonl, §20.1).
        "todos-1.2": (product("DemoTodos"), ["--release", "1.2.0", "--share-state-v2"]),
        // The versioned test plugin's first release (upgrade-rollback.jsonl, hibernate.jsonl, §20).
        "notes-1.0": (TestPlugins.python, [Versioned.script]),
        "profile": (TestPlugins.python, ["\(packageRoot)/Plugins/python/profile.py"]),
        "projects": (TestPlugins.node, ["\(packageRoot)/Plugins/node/projects.js"]),
    ]

    static func pluginReplays() -> [String] {
        transcripts(for: "plugin").flatMap { name in ((try? load(name).header.plugins) ?? []).map { "\(name) ▸ \($0)" }
        }
    }

    @Test(
        "replayed against the SDK plugins it names, in Swift, Python and Node (the test plays the host)",
        arguments: pluginReplays())
    func againstPlugins(_ replay: String) async throws {
        let parts = replay.components(separatedBy: " ▸ ")
        let (name, language) = (parts[0], parts[1])
        let (_, _, transcript) = try Self.load(name)
        let (executable, arguments) = try #require(
            Self.pluginCommands[language], "unknown plugin '\(language)' in \(name)")
        let process = try CLIProcess(arguments, executable: executable)
        var received = 0
        for step in transcript.steps where step.sync == nil {
            switch step.side {
            case .host:
                process.send(JSONWriter.string(step.message) + "\n")
            case .plugin:
                let line = try await process.stdoutLine(received)
                received += 1
                let actual = try JSONParser.parse(line)
                #expect(
                    Transcript.mismatch(pattern: step.message, actual: actual) == nil,
                    "\(language), transcript line \(step.line): \(Transcript.mismatch(pattern: step.message, actual: actual) ?? "")"
                )
            case .client:
                Issue.record(
                    "\(name) line \(step.line): a control client's message in a transcript replayed against plugins")
            }
        }
        #expect(try await process.waitForExit() == 0, "a plugin exits 0 on exit after shutdown")
    }
}

/// The `deepLink/changed` notifications a host replay has not matched yet, in order (drive item `deepLink/changed`).
final class LinkChanges: Sendable {
    private let events: EventLog
    private let matched = Mutex(0)

    init(_ events: EventLog) { self.events = events }

    /// The next notification, once the host has sent it.
    func next() async throws -> DeepLinkChangedNotification.Params {
        let index = matched.withLock { $0 }
        try await events.wait(for: "deepLink/changed #\(index + 1)") { all in
            all.filter { if case .deepLinkChanged = $0 { true } else { false } }.count > index
        }
        matched.withLock { $0 += 1 }
        return events.linkChanges[index]
    }
}

/// Pins a plugin-replayed transcript to the host: its host lines are replayed against SDK plugins, and here compared
/// with what the real host sent in a session of the same scenario, so neither side of the spec's example can drift.
enum TracedSession {
    /// A trace writer in a fresh folder, for `HostOptions.trace`.
    static func writer() throws -> TraceWriter {
        try TraceWriter(path: try TestSweep.temporaryDirectory() + "/trace.jsonl")
    }

    /// The `index`-th conversation (from 0) between the host and `plugin` in a closed trace: every process the
    /// host started for it (a restart, a wake, an upgrade's candidate or its rollback) begins with `initialize`.
    static func session(_ trace: TraceWriter, plugin: String, index: Int) throws -> [TraceRecord] {
        let all = try sessions(trace, plugin: plugin)
        guard index < all.count else {
            throw TestFailure("the trace has \(all.count) session(s) with '\(plugin)', not \(index + 1)")
        }
        return all[index]
    }

    /// Every conversation between the host and `plugin` in a closed trace, in the order they began. Told apart by
    /// the process, not by time: an old version's `shutdown` can be answered after its successor's `initialize`.
    static func sessions(_ trace: TraceWriter, plugin: String) throws -> [[TraceRecord]] {
        trace.close()
        var sessions: [[TraceRecord]] = []
        var byProcess: [Int32: Int] = [:]
        for record in try TraceTests.records(trace.path) where record.plugin == plugin {
            guard let message = record.message, !isHeartbeat(message) else { continue }
            let pid = try #require(record.pid, "a trace record without the plugin's pid: \(record)")
            if record.direction == .out && message["method"] == .string(InitializeRequest.method) {
                byProcess[pid] = sessions.count
                sessions.append([])
            }
            if let index = byProcess[pid] { sessions[index].append(record) }
        }
        return sessions
    }

    /// Expects each side's lines of the transcript `name` up to its `shutdown` to be what each side sent in
    /// `session`, in order (heartbeats aside, whose number depends on time).
    static func expect(_ name: String, matches session: [TraceRecord]) throws {
        let (_, _, transcript) = try TranscriptTests.load(name)
        let steps = transcript.steps.filter { $0.sync == nil && !isHeartbeat($0.message) }
        let end = steps.firstIndex { $0.message["method"] == .string(ShutdownRequest.method) } ?? steps.endIndex
        for (side, direction) in [(Transcript.Side.host, TraceDirection.out), (.plugin, .in)] {
            let expected = steps[..<end].filter { $0.side == side }
            let actual = session.filter { $0.direction == direction }.compactMap(\.message)
            #expect(actual.count >= expected.count, "\(name): \(side) sent \(actual.count) messages: \(actual)")
            for (step, message) in zip(expected, actual) {
                let problem = Transcript.mismatch(pattern: step.message, actual: message)
                #expect(problem == nil, "\(name) line \(step.line): \(problem ?? ""); the \(side) sent \(message)")
            }
        }
    }

    /// A ping either way or the answer to the host's (ids `hb-N`): their number depends on time.
    static func isHeartbeat(_ message: JSONValue) -> Bool {
        message["method"] == .string(PingRequest.method) || message["id"]?.stringValue?.hasPrefix("hb-") == true
    }
}
