import Foundation
import SwitchyardClient
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import SwitchyardSpec
import Testing

/// The protocol trace through the real CLI and host: the file, the log, and control subscribers (spec §15.1).
@Suite("Protocol trace", .heavy, .timeLimit(.minutes(2)))
struct TraceTests {
    static func validator() -> SchemaValidator { SchemaValidator(directory: "\(packageRoot)/Protocol/schema") }

    /// The demo's Python profile plugin (a stack: overview, then settings at `switchyard://settings`).
    static let profile = PluginManifest(
        name: "profile", command: [TestPlugins.python, "\(packageRoot)/Plugins/python/profile.py"])

    /// An app whose root is the profile plugin.
    static func profileManifest() throws -> String {
        try temporaryManifest(
            """
            {"app": "trace-test", "root": {"plugin": "profile", "type": "profile"},
             "plugins": [{"name": "profile", "command": ["\(TestPlugins.python)", "\(packageRoot)/Plugins/python/profile.py"]}]}
            """)
    }

    static func script(_ text: String) throws -> String {
        let path = try TestSweep.temporaryDirectory() + "/script.txt"
        try SpawnLock.withLock { try text.write(toFile: path, atomically: true, encoding: .utf8) }
        return path
    }

    /// Every line of a trace file, parsed, each checked against the schema (and its message against the envelope's).
    static func records(_ path: String) throws -> [TraceRecord] {
        let text = String(decoding: try FileSystem.readFile(path), as: UTF8.self)
        #expect(text.hasSuffix("\n"), "the last record is complete")
        let validator = validator()
        return try text.split(separator: "\n").map { line in
            let value = try JSONParser.parse(String(line))
            #expect(try validator.validate(value, against: "trace.event.json#/$defs/params") == [], "\(line)")
            let record = try JSONValueDecoder().decode(TraceRecord.self, from: value)
            if let message = record.message {
                #expect(try validator.validate(message, against: "envelope.json") == [], "\(line)")
            }
            return record
        }
    }

    /// A message record in short: `out initialize#1`, `in #1`, `out initialized`; heartbeats are left out (their
    /// number depends on time).
    static func summary(_ record: TraceRecord) -> String? {
        guard let direction = record.direction, let message = record.message else { return nil }
        if TracedSession.isHeartbeat(message) { return nil }
        let id = message["id"].flatMap { $0.intValue.map { "#\($0)" } } ?? ""
        return "\(direction.rawValue) \(message["method"]?.stringValue ?? "")\(id)"
    }

    /// Reads and drops the notifications already received (what was traced before the last answer).
    static func drain(_ client: ControlClient) throws {
        let timeout = client.timeoutMilliseconds
        client.timeoutMilliseconds = 0
        while (try? client.nextNotification()) != nil {}
        client.timeoutMilliseconds = timeout
    }

    /// What a short session says to the profile plugin and back: handshake, root, one deep link, shutdown.
    static let profileSession = [
        "out initialize#1", "in #1", "out initialized", "out coordinator/create#2", "in #2",
        "out coordinator/route#3", "in #3", "out shutdown#4", "in #4", "out exit",
    ]

    @Test("run --trace records every message of a session, both directions, as JSON lines that match the schema")
    func traceFile() async throws {
        let directory = try TestSweep.temporaryDirectory()
        let trace = directory + "/trace.jsonl"
        let process = try CLIProcess([
            "run", "--manifest", try Self.profileManifest(), "--no-socket", "--trace", trace,
            "--script", try Self.script("switchyard://settings\nexpect stack profile.profile settings\n"),
        ])
        process.closeStdin()
        #expect(try await process.waitForExit() == 0, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        #expect(FileSystem.permissions(trace) == 0o600)
        let records = try Self.records(trace)
        #expect(records.allSatisfy { $0.plugin == "profile" })
        #expect(records.compactMap(Self.summary) == Self.profileSession)
        let route = try #require(records.first { $0.message?["method"] == "coordinator/route" })
        #expect(route.message?["params"]?["route"] == "settings")
        #expect(route.message?["params"]?["link"]?["url"] == "switchyard://settings")
        #expect(!FileSystem.exists(trace + ".1"), "a short session stays far below the bound")
    }

    @Test("--log-level trace prints every message with the plugin's name and its direction")
    func logLevelTrace() async throws {
        let process = try CLIProcess([
            "run", "--manifest", try Self.profileManifest(), "--no-socket", "--log-level", "trace",
            "--script", try Self.script("switchyard://settings\n"),
        ])
        process.closeStdin()
        #expect(try await process.waitForExit() == 0, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        // At trace level each log line starts with its timestamp.
        let marker = "TRACE [profile] "
        let traced = process.stderr.compactMap { line in line.range(of: marker).map { String(line[$0.upperBound...]) } }
        let summaries = try traced.compactMap { arrow -> String? in
            let direction = arrow.hasPrefix("→") ? TraceDirection.out : .in
            let message = try JSONParser.parse(String(arrow.dropFirst(2)))
            return Self.summary(TraceRecord(time: "", plugin: "profile", direction: direction, message: message))
        }
        #expect(summaries == Self.profileSession, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        #expect(traced.contains { $0.hasPrefix("→ {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"") })
    }

    @Test(
        "a plugin that floods: the trace file rotates and neither file passes --trace-max-bytes; invalid lines are recorded"
    )
    func floodRespectsTheBound() async throws {
        let directory = try TestSweep.temporaryDirectory()
        let trace = directory + "/trace.jsonl"
        // 5,120 notifications before its answer to `initialize` (all read before the app is ready), and a line
        // that is not JSON before every answer.
        let manifest = try temporaryManifest(
            """
            {"app": "trace-flood", "plugins": [{"name": "flood", "product": "misbehave",
             "args": ["--name", "flood", "--flood-after", "1", "--flood-lines", "5120", "--garbage-after", "1"]}]}
            """)
        let bound = 65_536
        let process = try CLIProcess([
            "run", "--manifest", manifest, "--no-socket", "--trace", trace, "--trace-max-bytes", "\(bound)",
            "--script", try Self.script("status\n"),
        ])
        process.closeStdin()
        #expect(try await process.waitForExit() == 0, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        let current = try FileSystem.readFile(trace).count
        let previous = try FileSystem.readFile(trace + ".1").count
        #expect(current <= bound && previous <= bound, "\(current) and \(previous) bytes against a bound of \(bound)")
        #expect(previous > bound / 2, "the rotated file was full when it moved")
        let records = try Self.records(trace + ".1") + Self.records(trace)
        #expect(records.contains { $0.message?["method"] == "log" })
        #expect(
            records.last { $0.message != nil }.flatMap(Self.summary) == "out exit", "the newest records are in FILE")
        let garbage = try #require(records.last { $0.raw != nil })
        #expect(garbage.raw == "this is not json {{{ \u{1}")
        #expect(garbage.error?.code == .parseError && garbage.direction == .in)
    }

    @Test("a control client subscribed to the trace gets trace/event for each message, filtered by plugin on request")
    func controlSubscriber() async throws {
        let path = try TestSweep.temporaryDirectory() + "/control.sock"
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.controlSocket = path
        let plugins = [Self.profile, TestPlugins.swiftHello()]
        try await withHost(plugins, root: CoordinatorReference(plugin: "profile", type: "profile"), options: options) {
            host in
            let client = try ControlClient(path: path, timeoutMilliseconds: Int32(defaultTimeout * 1000))
            defer { client.close() }
            let validator = Self.validator()
            #expect(try client.call("trace/subscribe") == [:])
            _ = try client.call("open", ["url": "switchyard://settings"])
            // The route went out and its answer came back, both as trace/event with a valid record.
            var seen: [String] = []
            while seen.count < 2 {
                let params = try #require(try client.nextNotification(TraceEventNotification.method))
                #expect(try validator.validate(params, against: "trace.event.json#/$defs/params") == [])
                let record = try JSONValueDecoder().decode(TraceRecord.self, from: params)
                // hello-swift, silent, gets heartbeats meanwhile.
                if record.plugin == "profile", let summary = Self.summary(record) { seen.append(summary) }
            }
            // Requests 1 and 2 were the handshake and the root, before the subscription.
            #expect(seen == ["out coordinator/route#3", "in #3"])

            // Only the plugins asked for: every event up to hello-swift's pong is hello-swift's.
            #expect(try client.call("trace/subscribe", ["plugins": ["hello-swift"]]) == [:])
            try Self.drain(client)
            _ = try await host.ping("profile")
            _ = try await host.ping("hello-swift")
            // (Heartbeats have string ids "hb-N"; the answer to `host.ping` has a number.)
            while true {
                let params = try #require(try client.nextNotification(TraceEventNotification.method))
                let record = try JSONValueDecoder().decode(TraceRecord.self, from: params)
                #expect(record.plugin == "hello-swift")
                if record.direction == .in && record.message?["id"]?.intValue != nil { break }
            }

            // Unsubscribed: no more events. Whatever was traced before is read first (it precedes the answer).
            #expect(try client.call("trace/unsubscribe") == [:])
            try Self.drain(client)
            _ = try await host.ping("profile")
            _ = try await host.ping("hello-swift")
            // Events the pings caused would be on the socket before this answer.
            _ = try client.call("$/ping")
            client.timeoutMilliseconds = 0
            var after: [String] = []
            while let notification = try? client.nextNotification() { after.append(notification.method) }
            #expect(!after.contains(TraceEventNotification.method))
        }
    }
}

/// What an author sees when a plugin fails: its stderr tail (a traceback) in the error, printed by the CLI.
@Suite("Errors an author can act on", .heavy, .timeLimit(.minutes(2)))
struct AuthorErrorTests {
    static let fixtures = "\(packageRoot)/Tests/Fixtures/plugins"

    /// The 1-based number of the line of `path` that contains `text`.
    static func lineOf(_ text: String, in path: String) throws -> Int {
        let lines = String(decoding: try FileSystem.readFile(path), as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.contains(text) }) + 1
    }

    /// An app of Python plugins (name, file) whose root is the first plugin's type of the same name.
    static func manifest(_ plugins: [(String, String)]) throws -> String {
        let entries = plugins.map { name, file in
            "{\"name\": \"\(name)\", \"command\": [\"\(TestPlugins.python)\", \"\(file)\"]}"
        }
        let root = plugins[0].0
        return try temporaryManifest(
            """
            {"app": "author-test", "root": {"plugin": "\(root)", "type": "\(root)"}, "plugins": [\(entries.joined(separator: ", "))]}
            """)
    }

    @Test(
        "a Python plugin that raises at import: its traceback is in the handshake error switchyard run prints, and in status"
    )
    func raisesAtImport() async throws {
        let manifest = try Self.manifest([
            ("profile", "\(packageRoot)/Plugins/python/profile.py"), ("raises", "\(Self.fixtures)/raises_at_import.py"),
        ])
        let process = try CLIProcess([
            "run", "--manifest", manifest, "--no-socket", "--script", try TraceTests.script("status\n"),
        ])
        process.closeStdin()
        #expect(try await process.waitForExit() == 0, "stderr:\n\(process.stderr.joined(separator: "\n"))")
        let stderr = process.stderr
        let failure = try #require(
            stderr.firstIndex {
                $0.hasPrefix("ERROR [raises] plugin 'raises' failed the handshake: it exited with code 1")
            },
            "stderr:\n\(stderr.joined(separator: "\n"))")
        let details = stderr[(failure + 1)...].prefix { $0.hasPrefix("  ") }
        #expect(details.first == "  stderr of plugin 'raises', last lines:")
        #expect(details.contains("    Traceback (most recent call last):"))
        #expect(details.contains { $0.contains("raises_at_import.py\", line 14, in <module>") })
        #expect(details.last == "    KeyError: 'initial_route'")
        // Its stderr lines themselves, at the default log level, with its name.
        #expect(stderr.contains("NOTICE [raises] KeyError: 'initial_route'"))
        // And `status` shows the plugin failed, with the traceback under it.
        let stdout = process.stdout
        let status = try #require(
            stdout.firstIndex {
                $0.hasPrefix("raises  failed") && $0.contains("— plugin 'raises' failed the handshake")
            },
            "stdout:\n\(stdout.joined(separator: "\n"))")
        #expect(stdout[status...].contains("    KeyError: 'initial_route'"))
    }

    @Test("a handler's internalError carries the plugin's stderr tail in error.data, the plugin's own data kept")
    func internalErrorCarriesStderr() async throws {
        let plugin = PluginManifest(
            name: "failing", command: [TestPlugins.python, "\(Self.fixtures)/failing_handler.py"])
        try await withHost([plugin], root: CoordinatorReference(plugin: "failing", type: "failing")) { host in
            do throws(ResponseError) {
                _ = try await host.open("switchyard://broken/1")
                Issue.record("the broken route succeeded")
            } catch {
                #expect(error.code == .internalError)
                // The SDK names the route, the type and the line of the method that raised (issue 30).
                let line = (try? Self.lineOf("# the bug: 'idd'", in: "\(Self.fixtures)/failing_handler.py")) ?? 0
                #expect(
                    error.message
                        == "route 'broken' of failing: Failing.broken raised KeyError: 'idd' (\(Self.fixtures)/failing_handler.py:\(line), answering coordinator/route); fix it there (the traceback below), or raise switchyard.reject(\"why\") to refuse the route on purpose"
                )
                #expect(error.data?["plugin"] == "failing")
                // What the SDK sent is kept beside it.
                #expect(error.data?["traceback"]?.stringValue?.hasSuffix("KeyError: 'idd'\n") == true)
                // The line the handler wrote before it failed, then the traceback the SDK wrote to stderr.
                let stderr = error.data?["stderr"]?.arrayValue?.compactMap(\.stringValue) ?? []
                #expect(stderr.contains("failing: looking up item 1"))
                #expect(stderr.last == "KeyError: 'idd'")
            }
            do throws(ResponseError) {
                _ = try await host.open("switchyard://reported")
                Issue.record("the reported route succeeded")
            } catch {
                #expect(error.data?["hint"] == "kept as the plugin sent it")
                #expect(error.data?["traceback"]?.stringValue?.hasSuffix("ValueError: no report today\n") == true)
                #expect(error.data?["stderr"]?.arrayValue?.last == "failing: about to report a failure")
            }
        }
    }

    @Test("the CLI prints the stderr tail and the traceback under the error: --script and switchyard open")
    func cliPrintsDetails() async throws {
        let manifest = try Self.manifest([("failing", "\(Self.fixtures)/failing_handler.py")])
        let script = try CLIProcess([
            "run", "--manifest", manifest, "--no-socket", "--script", try TraceTests.script("switchyard://broken/1\n"),
        ])
        script.closeStdin()
        #expect(try await script.waitForExit() != 0)
        let lines = script.stderr
        let error = try #require(
            lines.firstIndex {
                $0.contains(
                    "script.txt:1: internalError (-32603): route 'broken' of failing: Failing.broken raised KeyError: 'idd' ("
                )
            },
            "stderr:\n\(lines.joined(separator: "\n"))")
        let details = Array(lines[(error + 1)...].prefix { $0.hasPrefix("  ") })
        // The traceback once (the SDK sent it and also wrote it to stderr), then what the plugin wrote before it.
        #expect(details.first == "  traceback:")
        #expect(details.filter { $0 == "    KeyError: 'idd'" }.count == 1, "\(details)")
        #expect(details.contains { $0.contains("failing_handler.py\", line ") && $0.contains("in broken") })
        let stderr = try #require(details.firstIndex(of: "  stderr of plugin 'failing', last lines:"), "\(details)")
        #expect(details[(stderr + 1)...].contains("    failing: looking up item 1"))

        let socket = try TestSweep.temporaryDirectory() + "/author.sock"
        let host = try CLIProcess(["run", "--manifest", manifest, "--socket", socket])
        try await host.waitForStderr("switchyard: ready (1/1 plugins")
        let open = try CLIProcess(["open", "--socket", socket, "switchyard://reported"])
        open.closeStdin()
        #expect(try await open.waitForExit() != 0)
        #expect(open.stderr.first == "switchyard: error: internalError (-32603): ValueError: no report today")
        #expect(
            Array(open.stderr.dropFirst()) == [
                "  traceback:", "    Traceback (most recent call last):",
                "      File \"failing_handler.py\", line 1, in reported",
                "    ValueError: no report today", "  stderr of plugin 'failing', last lines:",
                "    failing: about to report a failure",
            ])
        let stop = try CLIProcess(["shutdown", "--socket", socket])
        stop.closeStdin()
        #expect(try await stop.waitForExit() == 0)
        #expect(try await host.waitForExit() == 0)
    }
}
