import Glibc
import SwitchyardClient
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardTestSupport
import SwitchyardUV
import Testing

/// Issue 11 item 7, "no input can stall the loop": the largest request under each request-data limit (spec §6) goes
/// through the real host's control socket while a second client pings it, and every ping is answered within 50 ms;
/// the request one over the limit gets `-32004 limitExceeded` naming the limit.
///
/// Serialized and alone among the heavy suites: hosts pinging at once on a two-core machine would measure each other,
/// not the host. The machine's own scheduling noise is measured first (idle pings, same host, same moment) and
/// allowed on top of the 50 ms: what the bound catches is the loop being held by the request.
@Suite("Large requests do not stall the loop", .serialized, .heavyAlone, .timeLimit(.minutes(1)))
struct LargeRequestTests {
    static let limits = RequestLimits.defaults
    /// The latency bound the issue sets for a ping while a large request is processed.
    static let maxPingMilliseconds = 50.0

    /// A stack type with a `**` route (one hop takes any number of segments) and a route without declared params
    /// (any params object goes through to the plugin and back as screen props).
    static let lab = TestPlugins.misbehave(
        "lab",
        [
            "--route-table",
            #"""
            [{"type": "lab", "kind": "stack", "initialRoute": "bench", "routes": [
              {"name": "bench", "transition": "root"},
              {"name": "all", "transition": "push", "deepLink": "**rest"},
              {"name": "item", "transition": "push"}]}]
            """#,
        ])

    @Test("a deep link with maxQueryItems query items is served while pings are answered; one more is refused")
    func queryItems() async throws {
        func link(_ count: Int) -> JSONValue {
            .string("lab://q?" + (0..<count).map { "key\($0)=value%20\($0)" }.joined(separator: "&"))
        }
        try await exercise(
            method: "open", under: ["url": link(Self.limits.maxQueryItems)],
            over: ["url": link(Self.limits.maxQueryItems + 1)],
            limit: "maxQueryItems", max: Self.limits.maxQueryItems)
    }

    @Test("a deep link with maxPathSegments segments is served while pings are answered; one more is refused")
    func pathSegments() async throws {
        func link(_ count: Int) -> JSONValue {
            // The URL's host is the first segment.
            .string("lab://" + (0..<count).map { "segment\($0)" }.joined(separator: "/"))
        }
        try await exercise(
            method: "open", under: ["url": link(Self.limits.maxPathSegments)],
            over: ["url": link(Self.limits.maxPathSegments + 1)],
            limit: "maxPathSegments", max: Self.limits.maxPathSegments)
    }

    @Test("a chain of maxChainSteps pushes is served while pings are answered; one more step is refused")
    func chainSteps() async throws {
        func steps(_ count: Int) -> JSONValue {
            ["steps": .array(Array(repeating: ["op": "route", "route": "item"], count: count))]
        }
        try await exercise(
            method: "navigate", under: steps(Self.limits.maxChainSteps), over: steps(Self.limits.maxChainSteps + 1),
            limit: "maxChainSteps", max: Self.limits.maxChainSteps)
    }

    @Test("params of maxParamsKeys keys are served while pings are answered; one more key, even nested, is refused")
    func paramsKeys() async throws {
        func object(_ count: Int) -> JSONValue {
            var object = JSONObject(minimumCapacity: count)
            for index in 0..<count { object["key\(index)"] = .int(Int64(index)) }
            return .object(object)
        }
        func steps(_ params: JSONValue) -> JSONValue {
            ["steps": [["op": "route", "route": "item", "params": params]]]
        }
        let max = Self.limits.maxParamsKeys
        try await exercise(
            method: "navigate", under: steps(object(max)), over: steps(object(max + 1)), limit: "maxParamsKeys",
            max: max)
        try await exercise(
            method: "navigate", under: steps(["nested": [object(max)]]), over: steps(["nested": [object(max + 1)]]),
            limit: "maxParamsKeys", max: max)
    }

    /// Sends `under` (which must succeed) and `over` (which must fail with the limit) on one client, each while
    /// another client pings the host back to back; checks every ping's round trip.
    private func exercise(method: String, under: JSONValue, over: JSONValue, limit: String, max: Int) async throws {
        let path = try TestSweep.temporaryDirectory() + "/control.sock"
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.controlSocket = path
        try await withHost([Self.lab], root: CoordinatorReference(plugin: "lab", type: "lab"), options: options) {
            host in
            let client = try ControlClient(path: path, timeoutMilliseconds: 20_000)
            defer { client.close() }
            let pinger = try ControlClient(path: path, timeoutMilliseconds: 20_000)
            defer { pinger.close() }
            _ = try pinger.call("$/ping")
            // The machine's noise right before and right after each measurement: a load that comes and goes (other
            // test processes, a build beside) is seen on both sides of it, not only at the start.
            func idleSlowest() throws -> Double {
                var slowest = 0.0
                for _ in 0..<30 {
                    let sent = UVLoop.hrtime
                    _ = try pinger.call("$/ping")
                    slowest = Swift.max(slowest, Double(UVLoop.hrtime - sent) / 1e6)
                }
                return slowest
            }
            let before = try idleSlowest()
            let served = try Self.whilePinging(client, pinger, method, under, host: host)
            if case .failure(let error) = served.answer {
                Issue.record("the largest request under \(limit) failed: \(error)")
            }
            let between = try idleSlowest()
            Self.check(served, noise: Swift.max(before, between), "\(method) at \(limit) = \(max)")

            let refused = try Self.whilePinging(client, pinger, method, over, host: host)
            let after = try idleSlowest()
            Self.check(refused, noise: Swift.max(between, after), "\(method) over \(limit)")
            guard case .failure(let error) = refused.answer else {
                Issue.record("a request over \(limit) succeeded")
                return
            }
            #expect(error.code == .limitExceeded)
            #expect(error.data?["limit"] == .string(limit))
            #expect(error.data?["max"] == .int(Int64(max)))
            #expect(error.data?["actual"] == .int(Int64(max + 1)))
            #expect(error.message.contains(limit))
            // The host is still serving, and the refused request changed nothing a later request depends on.
            _ = try client.call("$/ping")
        }
    }

    /// Writes the request on `client`, then pings on `pinger` until the request's answer has arrived: every ping
    /// is sent while the request is outstanding, so at least one measures the loop while it has the request. Each
    /// ping's wall time is measured with the CPU time the host's loop thread used meanwhile.
    private static func whilePinging(
        _ client: ControlClient, _ pinger: ControlClient, _ method: String, _ params: JSONValue, host: HostHandle
    ) throws -> Measured {
        let id = RequestID.number(Int64.random(in: 1_000_000...Int64.max))
        try client.sendRaw(Message.request(id: id, method: method, params: params).encodedLine())
        var pings: [Ping] = []
        // Checked between pings without blocking; restored for the calls after.
        client.timeoutMilliseconds = 0
        defer { client.timeoutMilliseconds = 20_000 }
        while true {
            let cpuBefore = host.loopCPUNanoseconds
            let sent = UVLoop.hrtime
            _ = try pinger.call("$/ping")
            let wall = Double(UVLoop.hrtime - sent) / 1e6
            let cpuAfter = host.loopCPUNanoseconds
            pings.append(
                Ping(
                    milliseconds: wall,
                    loopCPUMilliseconds: cpuBefore.flatMap { before in cpuAfter.map { Double($0 &- before) / 1e6 } }))
            let message: Message
            do { message = try client.next() } catch {
                if case .timeout = error { continue }
                throw error
            }
            switch message {
            case .response(id, let result): return Measured(answer: .success(result), pings: pings)
            case .errorResponse(id, let error): return Measured(answer: .failure(error), pings: pings)
            default: continue
            }
        }
    }

    struct Ping {
        /// The round trip's wall time.
        let milliseconds: Double
        /// CPU time the host's loop thread used during the round trip (nil if it could not be read).
        let loopCPUMilliseconds: Double?
    }

    struct Measured {
        let answer: Result<JSONValue, ResponseError>
        /// The other client's pings while the request was outstanding.
        let pings: [Ping]
    }

    /// A ping slower than the bound (plus the machine's noise) fails the test only if the host itself held it: if
    /// the loop thread used at least the bound's worth of CPU during that very round trip, the ping waited behind
    /// the host's own work; if not, it waited for a CPU the machine gave to something else (a build, a busy loop),
    /// which no host can prevent.
    private static func check(_ measured: Measured, noise: Double, _ what: String) {
        guard measured.pings.allSatisfy({ $0.loopCPUMilliseconds != nil }) else {
            Issue.record("the host's loop CPU time could not be read")
            return
        }
        let held = measured.pings.filter {
            $0.milliseconds >= maxPingMilliseconds + noise && ($0.loopCPUMilliseconds ?? 0) >= maxPingMilliseconds
        }
        let slowest = measured.pings.max { $0.milliseconds < $1.milliseconds }
        #expect(
            held.isEmpty,
            "a ping took \(held.first?.milliseconds ?? 0) ms during \(what), and the host's loop used \(held.first?.loopCPUMilliseconds ?? 0) ms of CPU meanwhile (\(measured.pings.count) pings; idle pings took up to \(noise) ms; the slowest took \(slowest?.milliseconds ?? 0) ms)"
        )
    }
}
