import SwitchyardProtocol
import Testing

/// The sans-I/O endpoint on a fake clock: no processes, no sockets; lines go to an array.
@Suite("RPC endpoint", .timeLimit(.minutes(1)))
struct RPCEndpointTests {
    /// An endpoint whose output is kept, decoded, for inspection.
    final class Wire {
        var lines: [Message] = []
        let endpoint = RPCEndpoint()

        init() {
            endpoint.send = { [unowned self] line in
                if case .message(let message, _) = MessageReader.decodeLine(line.dropLast()[...], lineNumber: 0) {
                    lines.append(message)
                }
            }
        }
    }

    @Test(
        "an answer's bytes go to its request's reader, which completes it once it left the table; without a reader, a match or the reader's yes nothing changes"
    )
    func resultReaders() {
        let wire = Wire()
        var read: [String] = []
        var general: [Result<JSONValue, ResponseError>] = []
        // Takes results that are a JSON string of digits, as a reader of a fixed shape would.
        let reader: RPCEndpoint.ResultReader = { [endpoint = wire.endpoint] bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.first == "\"", text.dropFirst().dropLast().allSatisfy(\.isNumber) else { return nil }
            return {
                #expect(
                    endpoint.pendingCount == 1,
                    "the request left the table (b is still there) before its completion ran")
                read.append(text)
            }
        }
        let withReader = wire.endpoint.request("a", encodedParams: Array("{}".utf8), readResult: reader) {
            general.append($0)
        }
        let plain = wire.endpoint.request("b", encodedParams: Array("{}".utf8)) { general.append($0) }
        guard case .number(let a) = withReader, case .number(let b) = plain else {
            Issue.record("ids are numbers")
            return
        }
        #expect(!wire.endpoint.receive(answer: b, result: Array(#""1""#.utf8)[...]), "no reader: left to receive(_:)")
        #expect(!wire.endpoint.receive(answer: 99, result: Array(#""1""#.utf8)[...]), "no such request")
        #expect(!wire.endpoint.receive(answer: a, result: Array(#""x""#.utf8)[...]), "outside the reader's shape")
        #expect(wire.endpoint.pendingCount == 2 && read.isEmpty && general.isEmpty, "nothing happened")
        #expect(wire.endpoint.receive(answer: a, result: Array(#""42""#.utf8)[...]))
        #expect(read == [#""42""#] && general.isEmpty && wire.endpoint.pendingCount == 1)
        #expect(!wire.endpoint.receive(answer: a, result: Array(#""42""#.utf8)[...]), "answered once")
        #expect(wire.endpoint.receive(.response(id: plain, result: 1)) == .resolved(id: plain, method: "b"))
        #expect(general == [.success(1)])
    }

    @Test("ids count up per endpoint; an answer resolves its own request, whatever the order")
    func resolvesByID() {
        let wire = Wire()
        var first: Result<JSONValue, ResponseError>?
        var second: Result<JSONValue, ResponseError>?
        let a = wire.endpoint.request("a", params: nil) { first = $0 }
        let b = wire.endpoint.request("b", params: ["x": 1]) { second = $0 }
        #expect(a == .number(1) && b == .number(2))
        #expect(
            wire.lines == [
                .request(id: .number(1), method: "a", params: nil),
                .request(id: .number(2), method: "b", params: ["x": 1]),
            ])
        #expect(
            wire.endpoint.receive(.errorResponse(id: b, error: ResponseError(.notAllowed, "no")))
                == .resolved(id: b, method: "b"))
        #expect(second == .failure(ResponseError(.notAllowed, "no")))
        #expect(first == nil)
        #expect(wire.endpoint.receive(.response(id: a, result: 5)) == .resolved(id: a, method: "a"))
        #expect(first == .success(5))
        #expect(
            wire.endpoint.receive(.response(id: a, result: 6)) == .unmatched(id: a), "a second answer matches nothing")
        #expect(wire.endpoint.pendingCount == 0)
    }

    @Test(
        "one request left unanswered while thousands after it are answered in any order stays pending, and the rest do not"
    )
    func longLivedRequest() {
        let wire = Wire()
        var oldest: Result<JSONValue, ResponseError>?
        let first = wire.endpoint.request("slow", params: nil) { oldest = $0 }
        var answered = 0
        for round in 0..<50 {
            let ids = (0..<100).map { _ in wire.endpoint.request("fast", params: nil) { _ in answered += 1 } }
            // Out of order: every other one first, then the rest backwards.
            for (position, id) in ids.enumerated() where position % 2 == 0 {
                wire.endpoint.receive(.response(id: id, result: .int(Int64(round))))
            }
            for (position, id) in ids.enumerated().reversed() where position % 2 == 1 {
                wire.endpoint.receive(.response(id: id, result: 0))
            }
            #expect(wire.endpoint.pendingCount == 1)
        }
        #expect(answered == 5_000)
        #expect(
            wire.endpoint.isPending(first) && !wire.endpoint.isPending(.number(2))
                && !wire.endpoint.isPending(.string("1")))
        #expect(wire.endpoint.pendingRequest(first)?.method == "slow")
        #expect(wire.endpoint.receive(.response(id: first, result: 1)) == .resolved(id: first, method: "slow"))
        #expect(oldest == .success(1))
        #expect(wire.endpoint.pendingCount == 0)
        let next = wire.endpoint.request("after", params: nil) { _ in }
        #expect(next == .number(5_002) && wire.endpoint.isPending(next))
    }

    @Test("typed requests decode their result, and say which side of the coding failed")
    func typed() {
        let wire = Wire()
        var answer: Result<TreeRenderRequest.Result, RPCFailure>?
        let id = wire.endpoint.request(TreeRenderRequest.self, .init(format: .dot)) { answer = $0 }
        #expect(wire.lines.first == .request(id: .number(1), method: "tree/render", params: ["format": "dot"]))
        wire.endpoint.receive(.response(id: id!, result: ["revision": 3, "text": "digraph"]))
        #expect(answer == .success(.init(revision: 3, text: "digraph")))

        var broken: Result<TreeRenderRequest.Result, RPCFailure>?
        let other = wire.endpoint.request(TreeRenderRequest.self, .init(format: .text)) { broken = $0 }
        wire.endpoint.receive(.response(id: other!, result: ["revision": "three"]))
        guard case .failure(.undecodable(let method, _))? = broken else {
            Issue.record("expected an undecodable result, got \(String(describing: broken))")
            return
        }
        #expect(method == "tree/render")
    }

    @Test("the earliest deadline is reported, and expire fails exactly what is due, earliest first")
    func deadlines() {
        let wire = Wire()
        var now: UInt64 = 1_000
        var outcomes: [String: ResponseError] = [:]
        wire.endpoint.request("slow", params: nil, deadline: now + 500) { outcomes["slow"] = $0.failure }
        wire.endpoint.request("fast", params: nil, deadline: now + 100) { outcomes["fast"] = $0.failure }
        wire.endpoint.request("forever", params: nil) { outcomes["forever"] = $0.failure }
        #expect(wire.endpoint.nextDeadline == 1_100)

        now += 99
        #expect(wire.endpoint.expire(now: now).isEmpty, "nothing is due a millisecond early")
        now += 1
        let expired = wire.endpoint.expire(now: now)
        #expect(expired.map(\.method) == ["fast"])
        #expect(outcomes["fast"]?.code == .timeout)
        #expect(outcomes["fast"]?.message == "no answer to 'fast' in time")
        #expect(wire.endpoint.nextDeadline == 1_500)

        now += 10_000
        let custom = wire.endpoint.expire(now: now) { ResponseError(.timeout, "\($0.method) took too long") }
        #expect(custom.map(\.method) == ["slow"])
        #expect(outcomes["slow"]?.message == "slow took too long")
        #expect(wire.endpoint.nextDeadline == nil, "a request without a deadline never expires")
        #expect(outcomes["forever"] == nil)
        #expect(
            wire.endpoint.receive(.response(id: .number(2), result: 1)) == .unmatched(id: .number(2)),
            "a late answer is dropped")
    }

    @Test("cancel removes a request, with or without running its completion")
    func cancellation() {
        let wire = Wire()
        var quiet: Result<JSONValue, ResponseError>?
        var told: Result<JSONValue, ResponseError>?
        let a = wire.endpoint.request("a", params: nil, deadline: 10) { quiet = $0 }
        let b = wire.endpoint.request("b", params: nil) { told = $0 }
        #expect(wire.endpoint.cancel(a)?.method == "a")
        #expect(quiet == nil)
        #expect(wire.endpoint.nextDeadline == nil)
        wire.endpoint.cancel(b, error: ResponseError(.shuttingDown, "gave up"))
        #expect(told == .failure(ResponseError(.shuttingDown, "gave up")))
        #expect(wire.endpoint.cancel(b) == nil)
        #expect(wire.endpoint.receive(.response(id: a, result: 1)) == .unmatched(id: a))
    }

    @Test("close fails everything pending, and every later request at once")
    func closing() {
        let wire = Wire()
        var outcomes: [Result<JSONValue, ResponseError>] = []
        wire.endpoint.request("a", params: nil) { outcomes.append($0) }
        wire.endpoint.request("b", params: nil, deadline: 5) { outcomes.append($0) }
        let gone = ResponseError(.shuttingDown, "the peer closed the connection")
        wire.endpoint.close(gone)
        #expect(outcomes == [.failure(gone), .failure(gone)])
        #expect(wire.endpoint.pendingCount == 0 && wire.endpoint.nextDeadline == nil)
        wire.endpoint.request("c", params: nil) { outcomes.append($0) }
        #expect(outcomes.count == 3 && outcomes.last == .failure(gone))
        #expect(wire.lines.count == 2, "nothing is sent after close")
    }

    @Test("incoming requests reach their handler, typed or raw; unknown methods and bad params get typed errors")
    func incomingRequests() {
        let wire = Wire()
        wire.endpoint.onRequest(PingRequest.self) { _, responder in responder.reply(.success([:])) }
        var later: RPCEndpoint.Responder?
        wire.endpoint.onRequest("slow") { _, responder in later = responder }
        wire.endpoint.onRequest(TreeRenderRequest.self) { params, responder in
            responder.reply(encoding: .success(TreeRenderRequest.Result(revision: 1, text: params.format.rawValue)))
        }

        #expect(
            wire.endpoint.receive(.request(id: .number(1), method: "$/ping", params: nil))
                == .request(id: .number(1), method: "$/ping", handled: true))
        #expect(
            wire.endpoint.receive(.request(id: .string("x"), method: "nope", params: nil))
                == .request(id: .string("x"), method: "nope", handled: false))
        wire.endpoint.receive(.request(id: .number(2), method: "tree/render", params: ["format": "json"]))
        wire.endpoint.receive(.request(id: .number(3), method: "tree/render", params: ["format": 7]))
        wire.endpoint.receive(.request(id: .number(4), method: "slow", params: nil))
        #expect(wire.lines.count == 4, "the slow request is not answered yet")
        later?.replyEncoded(Array("[1]".utf8))
        later?.reply(.success(2))

        #expect(wire.lines[0] == .response(id: .number(1), result: [:]))
        #expect(wire.lines[1] == .errorResponse(id: .string("x"), error: .methodNotFound("nope")))
        #expect(wire.lines[2] == .response(id: .number(2), result: ["revision": 1, "text": "json"]))
        guard case .errorResponse(.number(3), let invalid) = wire.lines[3] else {
            Issue.record("expected invalidParams, got \(wire.lines[3])")
            return
        }
        #expect(invalid.code == .invalidParams && invalid.data?["field"] == "format")
        #expect(wire.lines[4] == .response(id: .number(4), result: [1]))
        #expect(wire.lines.count == 5, "a responder answers once")
    }

    @Test("notifications reach their handler; an error without an id is left to the caller")
    func notifications() {
        let wire = Wire()
        var revisions: [UInt64] = []
        wire.endpoint.onNotification(TreeChangedNotification.self) { revisions.append($0.revision) }
        #expect(
            wire.endpoint.receive(.notification(method: "tree/changed", params: ["revision": 4]))
                == .notification(method: "tree/changed", handled: true))
        #expect(
            wire.endpoint.receive(.notification(method: "other", params: nil))
                == .notification(method: "other", handled: false))
        #expect(revisions == [4])
        var outcome: Result<JSONValue, ResponseError>?
        wire.endpoint.request("a", params: nil) { outcome = $0 }
        let refusal = ResponseError(.unauthorized, "not you")
        #expect(wire.endpoint.receive(.errorResponse(id: nil, error: refusal)) == .unattributedError(refusal))
        #expect(outcome == nil && wire.endpoint.pendingCount == 1)
        wire.endpoint.notify(ExitNotification.self, Empty())
        #expect(wire.lines.last == .notification(method: "exit", params: [:]))
    }

    @Test("a completion that sends another request sees a consistent table (synchronous transports)")
    func reentrant() {
        let wire = Wire()
        var chain: [String] = []
        wire.endpoint.request("first", params: nil, deadline: 1) { _ in
            chain.append("first")
            wire.endpoint.request("second", params: nil, deadline: 1) { _ in chain.append("second") }
        }
        wire.endpoint.expire(now: 1)
        #expect(chain == ["first"], "a request added during expire waits for the next call")
        wire.endpoint.expire(now: 1)
        #expect(chain == ["first", "second"])
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
