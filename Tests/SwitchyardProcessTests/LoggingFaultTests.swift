import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardTestSupport
import Testing

/// No verdict of the host's own making: a plugin that logs a lot, or answers too much, is judged on its protocol,
/// never held back until it looks hung (issue 26, item 1).
@Suite("Logging and oversize answers: no false verdicts", .heavy, .timeLimit(.minutes(1)))
struct LoggingFaultTests {
    private static let lab = CoordinatorReference(plugin: "chatty", type: "lab")

    /// Navigates `count` times to `sample` on the lab root and back, so each answer follows the stderr it writes.
    private static func answerRoutes(_ host: HostHandle, count: Int) async throws {
        for round in 0..<count {
            _ = try await host.navigate([.route("sample", ["id": .string("\(round)")])])
            _ = try await host.navigate([.popLast])
        }
    }

    @Test("a 400 KB stderr line written while answering a route: answered, never killed, the drop logged")
    func longLine() async throws {
        let logs = LogCapture()
        let chatty = TestPlugins.misbehave("chatty", ["--stderr-on-route", "sample:409600"])
        try await withHost([chatty], root: Self.lab, logs: logs) { host in
            try await Self.answerRoutes(host, count: 3)
            let status = try #require(await host.status().first)
            #expect(status.state == .ready)
            #expect(status.restarts == 0)
            try await logs.waitFor("wrote more stderr than maxStderrBytesPerSecond (65536) allows: dropped")
        }
        #expect(!logs.contains("killing plugin"))
        // The part within the budget is still logged, capped in length.
        #expect(logs.contains("[line truncated at 4096 bytes]"))
    }

    @Test("10 MB of stderr written while answering a route: answered, never blocked; what it cost the loop")
    func tenMegabytes() async throws {
        let logs = LogCapture()
        let chatty = TestPlugins.misbehave("chatty", ["--stderr-on-route", "sample:10485760:8192"])
        try await withHost([chatty], root: Self.lab, logs: logs) { host in
            let before = host.loopCPUNanoseconds ?? 0
            try await Self.answerRoutes(host, count: 1)
            let spent = (host.loopCPUNanoseconds ?? 0) - before
            // A figure for the record (no timing assertion): the loop's CPU for 10 MB drained and dropped.
            print("loop CPU for one route whose answer follows 10 MiB of stderr: \(spent / 1_000) µs")
            let status = try #require(await host.status().first)
            #expect(status.state == .ready)
            #expect(status.restarts == 0)
            try await logs.waitFor("dropped")
        }
        #expect(!logs.contains("killing plugin"))
    }

    @Test("an answer over maxLineBytes fails its request at once with limitExceeded; the plugin keeps serving")
    func oversizeAnswer() async throws {
        var limits = LimitOverrides()
        limits.maxLineBytes = 65_536
        let big = TestPlugins.misbehave("chatty", ["--answer-oversize", "sheet:1000000"], limits: limits)
        try await withHost([big], root: Self.lab) { host in
            do throws(ResponseError) {
                _ = try await host.navigate([.route("sheet")])
                Issue.record("the oversize answer was taken")
            } catch {
                #expect(error.code == .limitExceeded)
                #expect(error.message.contains("limit of 65536 bytes"), "\(error.message)")
                #expect(error.message.contains("an answer with id"), "\(error.message)")
            }
            // Its next answer is a normal one: the rest of the long line was dropped, nothing else.
            _ = try await host.navigate([.route("sample", ["id": "1"])])
            let status = try #require(await host.status().first)
            #expect(status.state == .ready)
            #expect(status.restarts == 0)
        }
    }
}
