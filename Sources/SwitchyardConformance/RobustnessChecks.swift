import SwitchyardNavigation
import SwitchyardProtocol

extension MainSession {
    /// The route request to repeat: the slowest one seen (the ping check wants a slow request), else nil. A route
    /// that wrote an over-long line is not a candidate: a ping behind it waits for megabytes to cross the pipe (its
    /// time grows with the machine's load, not with the plugin's handling), and line-limit already fails it.
    private func slowestRoute() -> RouteTiming? {
        timings.filter { question in
            !question.wroteOversizeLine && trees.contains { $0.tree[question.question.instance] != nil }
        }
        .max { $0.elapsed < $1.elapsed }
    }

    /// §3.4: a `$/ping` sent right behind the slowest `coordinator/route` seen is answered within
    /// heartbeatTimeoutMs (after that, the host calls the plugin hung).
    func checkPingWhileBusy() {
        let limit = session.launch.limits.heartbeatTimeoutMs
        let mark = session.mark
        guard let slow = slowestRoute(), let params = try? Coding.encode(slow.question.request) else {
            let reply = session.request(PingRequest.method, [:], timeoutMs: limit)
            if case .result = reply {
                ledger.note(.ping, "answered (no route request to keep the plugin busy: none was taken)")
            } else {
                record.fail(
                    .ping, "$/ping: \(reply.description)", expected: "{} within heartbeatTimeoutMs (\(limit) ms)",
                    since: mark)
            }
            return
        }
        let busy = session.nextID(for: CoordinatorRouteRequest.method)
        let ping = session.nextID(for: PingRequest.method)
        let start = ContinuousClock.now
        session.send(.request(id: busy, method: CoordinatorRouteRequest.method, params: params))
        session.send(.request(id: ping, method: PingRequest.method, params: [:]))
        let pingReply = session.wait(for: ping, timeoutMs: limit, judging: false)
        let pingTime = ContinuousClock.now - start
        let busyReply = session.wait(for: busy, timeoutMs: session.launch.limits.requestTimeoutMs)
        let busyTime = ContinuousClock.now - start
        let what =
            "$/ping sent right behind coordinator/route '\(slow.question.route)' of \(slow.question.type) (which took \(milliseconds(slow.elapsed)) ms before)"
        let expected =
            "{} within heartbeatTimeoutMs (\(limit) ms), also while a request is being handled (§3.4: read stdin apart from the handlers)"
        switch pingReply {
        case .result:
            let order = milliseconds(pingTime) <= milliseconds(busyTime) ? "before" : "after"
            ledger.note(
                .ping,
                "\(what): answered in \(milliseconds(pingTime)) ms, \(order) the route (\(milliseconds(busyTime)) ms)")
            if order == "after" && milliseconds(busyTime) >= 250 {
                record.warn(
                    .ping, "\(what): the ping waited \(milliseconds(pingTime)) ms for the route to finish",
                    expected: expected, since: mark)
            }
        case .error(let error):
            record.fail(
                .ping, "\(what): answered with the error \(error.code.rawValue): \(error.message)", expected: expected,
                since: mark)
        case .timeout, .ended:
            record.fail(.ping, "\(what): \(pingReply.description)", expected: expected, since: mark)
        }
        if case .timeout = busyReply {
            record.noAnswer(.ping, "the route request sent with the ping", busyReply, since: mark)
        }
    }

    /// §7: an unknown request gets -32601; an unknown notification is ignored (no answer, the plugin goes on).
    func checkUnknownMethod() {
        let mark = session.mark
        let method = "switchyard-check/noSuchMethod"
        let reply = session.request(method, ["probe": true])
        let expected = "the error -32601 methodNotFound (data.method: '\(method)')"
        switch reply {
        case .error(let error) where error.code == .methodNotFound:
            ledger.note(.unknownMethod, "-32601 for an unknown request")
        case .error(let error):
            record.fail(
                .unknownMethod,
                "an unknown request was answered with \(error.code.rawValue) \(error.code.name): \(error.message)",
                expected: expected, since: mark)
        case .result(let value):
            record.fail(
                .unknownMethod, "an unknown request was answered with the result \(JSONWriter.string(value))",
                expected: expected, since: mark)
        case .timeout, .ended:
            record.noAnswer(.unknownMethod, "an unknown request", reply, since: mark)
            return
        }
        let strays = session.strayAnswers.count
        let notificationMark = session.mark
        session.notify("switchyard-check/noSuchNotification", ["probe": true])
        let ping = session.request(PingRequest.method, [:])
        if case .result = ping, session.strayAnswers.count == strays {
            ledger.note(.unknownMethod, "an unknown notification ignored")
        } else {
            record.fail(
                .unknownMethod,
                "after an unknown notification: $/ping got \(ping.description), \(session.strayAnswers.count - strays) answer(s) to no request",
                expected: "notifications are never answered (§2), and the plugin goes on", since: notificationMark)
        }
    }

    /// §2: members the spec does not define are ignored, on a live plugin: in a ping's envelope and params, and in
    /// a route request's params (the initialize side runs in its own process).
    func checkUnknownMembersLive() {
        let mark = session.mark
        let id = session.nextID(for: PingRequest.method)
        let line: JSONValue = [
            "jsonrpc": "2.0", "id": id.json, "method": .string(PingRequest.method),
            "params": ["checkPluginProbe": ["nested": [1, 2, 3]]], "trace": ["origin": "check-plugin"],
        ]
        session.sendLine(JSONWriter.encode(line))
        let reply = session.wait(for: id, timeoutMs: session.launch.limits.requestTimeoutMs)
        let expected = "the same answer as without them: receivers MUST ignore members they do not know (§2)"
        if case .result = reply {
        } else {
            record.fail(
                .unknownMembers, "$/ping with unknown members in the envelope and params: \(reply.description)",
                expected: expected, since: mark)
        }
        guard
            let sample = timings.first(where: { timing in trees.contains { $0.tree[timing.question.instance] != nil } }
            ),
            case .object(var params)? = try? Coding.encode(sample.question.request)
        else { return }
        params["checkPluginHint"] = ["unknown": true]
        let routeMark = session.mark
        let routeReply = session.request(CoordinatorRouteRequest.method, .object(params))
        switch session.decode(
            routeReply, as: CoordinatorRouteRequest.Result.self, method: CoordinatorRouteRequest.method)
        {
        case .success:
            ledger.note(.unknownMembers, "ignored in a live ping and route request")
        case .failure(.plugin(let error)) where error.code == .rejectedByGuard:
            ledger.note(.unknownMembers, "ignored in a live ping and route request")
        case .failure(let problem):
            record.fail(
                .unknownMembers,
                "coordinator/route '\(sample.question.route)' with an unknown member in params: \(Self.describe(problem))",
                expected: expected, since: routeMark)
        }
    }

    static func describe(_ problem: AnswerProblem) -> String {
        switch problem {
        case .plugin(let error): "the error \(error.code.rawValue) \(error.code.name): \(error.message)"
        case .host(let error): error.message
        case .none(let reply): reply.description
        }
    }

    /// §1, §6: a line of exactly maxLineBytes from the host is read whole (a `$/ping` padded with JSON whitespace).
    /// That the plugin never writes a longer line is checked on every line of every session.
    func checkLongLine() {
        let limit = session.launch.limits.maxLineBytes
        let id = session.nextID(for: PingRequest.method)
        let head = Array(#"{"jsonrpc":"2.0","id":\#(JSONWriter.string(id.json)),"method":"$/ping","params":{}"#.utf8)
        let padding = limit - head.count - 1
        guard padding >= 0 else { return }
        let mark = session.mark
        session.sendLine(head + [UInt8](repeating: 0x20, count: padding) + [UInt8(ascii: "}")])
        let reply = session.wait(for: id, timeoutMs: session.launch.limits.requestTimeoutMs)
        if case .result = reply {
            ledger.note(.lineLimit, "a line of exactly \(limit) bytes was read and answered")
        } else {
            record.fail(
                .lineLimit,
                "a $/ping line of exactly maxLineBytes (\(limit) bytes, padded with spaces): \(reply.description)",
                expected:
                    "{}: the line is within the limit the plugin was given in initialize (§6), and valid JSON (§1)",
                since: mark)
        }
    }

    /// Spawn-to-ready and route round trips, reported and never judged.
    func measureRoundTrips() {
        if let readyAfter { ledger.measure(.timing, "spawn to ready", milliseconds: millisecondsValue(readyAfter)) }
        let live = timings.filter { timing in trees.contains { $0.tree[timing.question.instance] != nil } }
        // A screen route is the cheapest honest round trip: no child coordinator to create.
        let candidate =
            live.first { timing in
                model?.registry.declaration(plugin: timing.question.plugin, type: timing.question.type)?
                    .route(named: timing.question.route)?.target == nil
            } ?? live.first
        var samples: [Double] = []
        let method: String
        var params: JSONValue = [:]
        if let candidate, let encoded = try? Coding.encode(candidate.question.request) {
            method = CoordinatorRouteRequest.method
            params = encoded
        } else {
            method = PingRequest.method
        }
        for _ in 0..<self.samples where session.unusable == nil {
            let start = ContinuousClock.now
            switch session.request(method, params) {
            case .result, .error: samples.append(millisecondsValue(ContinuousClock.now - start))
            case .timeout, .ended: break
            }
        }
        guard !samples.isEmpty else { return }
        samples.sort()
        func percentile(_ p: Double) -> Double {
            samples[min(samples.count - 1, Int((p * Double(samples.count)).rounded(.up)) - 1)]
        }
        let what = method == PingRequest.method ? "$/ping" : "coordinator/route '\(candidate?.question.route ?? "")'"
        ledger.measure(.timing, "\(what) round trip p50", milliseconds: percentile(0.5))
        ledger.measure(.timing, "\(what) round trip p99", milliseconds: percentile(0.99))
        ledger.note(.timing, "\(samples.count) round trips of \(what) (reported, not judged)")
    }
}
