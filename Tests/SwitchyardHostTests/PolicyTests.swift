import SwitchyardHost
import SwitchyardProtocol
import Testing

/// The connection's rules as values, on a fake clock: no process, no loop (spec §6, §6.1, §16).
@Suite("Plugin policies on an injected clock", .timeLimit(.minutes(1)))
struct PolicyTests {
    @Test("admission: a burst of the rate, refilled by time; outstanding requests capped; duplicate ids refused")
    func admission() {
        var policy = AdmissionPolicy(messagesPerSecond: 10, maxOutstandingRequests: 2, maxProtocolErrors: 3)
        var tokens: [Bool] = []
        for _ in 0..<11 { tokens.append(policy.takeToken(now: 1_000)) }
        #expect(tokens == Array(repeating: true, count: 10) + [false])
        // 100 ms at 10 per second is one token.
        let refilled = [policy.takeToken(now: 1_100), policy.takeToken(now: 1_100)]
        #expect(refilled == [true, false])
        var verdicts: [AdmissionPolicy.RequestVerdict] = []
        for id in [RequestID.number(1), .number(1), .string("b"), .number(3)] {
            verdicts.append(policy.beginRequest(id))
        }
        #expect(verdicts == [.accepted, .duplicateID, .accepted, .overLimit])
        policy.endRequest(.number(1))
        let afterAnswer = policy.beginRequest(.number(3))
        #expect(afterAnswer == .accepted)
    }

    @Test("quarantine: one error more than the maximum within the window, not spread over a longer time")
    func quarantine() {
        var spread = AdmissionPolicy(
            messagesPerSecond: 10, maxOutstandingRequests: 2, maxProtocolErrors: 3, errorWindowMs: 10_000)
        var spreadVerdicts: [Bool] = []
        for index in 0..<10 { spreadVerdicts.append(spread.recordError(now: UInt64(index) * 4_000)) }
        #expect(!spreadVerdicts.contains(true))
        var burst = AdmissionPolicy(
            messagesPerSecond: 10, maxOutstandingRequests: 2, maxProtocolErrors: 3, errorWindowMs: 10_000)
        var burstVerdicts: [Bool] = []
        for index in 0..<4 { burstVerdicts.append(burst.recordError(now: 500 + UInt64(index))) }
        #expect(burstVerdicts == [false, false, false, true])
    }

    @Test("heartbeat: a silent plugin is pinged after the interval, hung after the timeout, and any word resets it")
    func heartbeat() {
        var policy = HeartbeatPolicy(intervalMs: 1_000, timeoutMs: 2_000, now: 0)
        #expect(policy.tickMs == 250)
        var actions = [policy.tick(now: 999)]
        policy.heard(now: 900)
        actions.append(policy.tick(now: 1_500))
        #expect(actions == [.none, .none])
        guard case .ping(let id) = policy.tick(now: 1_900) else {
            Issue.record("no ping after a silent interval")
            return
        }
        let beforeTimeout = policy.tick(now: 3_899)
        #expect(beforeTimeout == .none)
        // The answer arrives at 3,899 (the connection reports every message as heard).
        policy.heard(now: 3_899)
        let answers = [policy.answered(.string(id)), policy.answered(.string(id)), policy.answered(.number(1))]
        #expect(answers == [true, false, false])
        let afterAnswer = policy.tick(now: 4_000)
        #expect(afterAnswer == .none)
        guard case .ping = policy.tick(now: 4_899) else {
            Issue.record("no second ping")
            return
        }
        let hung = policy.tick(now: 6_899)
        #expect(hung == .hung(sinceMs: 2_000))
        var off = HeartbeatPolicy(intervalMs: 0, timeoutMs: 2_000, now: 0)
        let offAction = off.tick(now: 100_000)
        #expect(offAction == .none)
    }

    @Test("heartbeat: a clock that steps back (the host's own stall accounted late) never condemns")
    func heartbeatClockStepsBack() {
        var policy = HeartbeatPolicy(intervalMs: 100, timeoutMs: 200, now: 10_000)
        guard case .ping = policy.tick(now: 10_100) else {
            Issue.record("no ping")
            return
        }
        let earlier = policy.tick(now: 9_000)
        #expect(earlier == .none)
    }

    @Test("write queue: over the limit refuses requests; progress keeps it alive; no progress for the window condemns")
    func writeQueue() {
        var policy = WriteQueuePolicy(limitBytes: 1_000, windowMs: 2_000)
        let underLimit = policy.wrote(queued: 900, now: 0)
        #expect(!underLimit)
        #expect(!policy.refusesRequests(queued: 900))
        let crossed = [policy.wrote(queued: 1_200, now: 100), policy.wrote(queued: 1_300, now: 150)]
        #expect(crossed == [true, false])
        #expect(policy.refusesRequests(queued: 1_300))
        #expect(policy.fits(700, queued: 1_300))
        #expect(!policy.fits(701, queued: 1_300))
        var verdicts = [policy.judge(queued: 1_300, now: 1_000)]
        verdicts.append(policy.judge(queued: 1_100, now: 2_100))
        verdicts.append(policy.judge(queued: 1_100, now: 4_100))
        verdicts.append(policy.judge(queued: 10, now: 4_200))
        #expect(
            verdicts == [.checkAgain(inMs: 1_100), .checkAgain(inMs: 2_000), .notReading(forMs: 2_000), .recovered])
        #expect(!policy.isStalled)
    }

    @Test("the shutdown ladder as data: request, stdin, SIGTERM, SIGKILL; no request to a plugin never ready")
    func ladder() {
        #expect(
            TeardownStep.ladder(graceMs: 500, shutdownTimeoutMs: 100, ready: true, term: 15, kill: 9) == [
                .shutdownRequest(waitMs: 100), .closeStdin(waitMs: 500), .signal(15, waitMs: 500),
                .signal(9, waitMs: 0),
            ])
        #expect(
            TeardownStep.ladder(graceMs: 500, shutdownTimeoutMs: 100, ready: false, term: 15, kill: 9).first
                == .closeStdin(waitMs: 500))
    }

    @Test("chain scheduler: a chain that consulted an incarnation since replaced must not commit")
    func schedulerIncarnations() {
        var scheduler = ChainScheduler<String>()
        let chain = scheduler.begin()
        scheduler.consult("a", incarnation: 1, by: chain)
        scheduler.consult("a", incarnation: 2, by: chain)  // only the first question records the incarnation
        scheduler.consult("b", incarnation: 7, by: chain)
        #expect(scheduler.restartedPlugin(of: chain) { ["a": 1, "b": 7][$0] ?? 0 } == nil)
        #expect(scheduler.restartedPlugin(of: chain) { ["a": 2, "b": 7][$0] ?? 0 } == "a")
        _ = scheduler.finish(chain)
        #expect(scheduler.chainsInFlight == 0)
        // A finished chain is forgotten: nothing to check, nothing to record.
        scheduler.consult("a", incarnation: 1, by: chain)
        #expect(scheduler.restartedPlugin(of: chain) { _ in 99 } == nil)
    }

    @Test("chain scheduler: the creations a chain has planned count against maxInstances until it finishes")
    func schedulerMaxInstances() {
        var scheduler = ChainScheduler<String>()
        let first = scheduler.begin(), second = scheduler.begin()
        // The plugin owns 1 instance, its limit is 3: a chain may plan two more. (Chains are checked each against
        // the committed tree; two that overshoot together conflict at commit, where the tree decides.)
        let firstOne = scheduler.reserveCreation(of: "p", by: first, owned: 1, limit: 3)
        #expect(firstOne)
        let firstTwo = scheduler.reserveCreation(of: "p", by: first, owned: 1, limit: 3)
        #expect(firstTwo)
        let firstThree = scheduler.reserveCreation(of: "p", by: first, owned: 1, limit: 3)
        #expect(!firstThree)
        let secondOne = scheduler.reserveCreation(of: "p", by: second, owned: 1, limit: 3)
        #expect(secondOne)
        let otherPlugin = scheduler.reserveCreation(of: "q", by: first, owned: 0, limit: 1)
        #expect(otherPlugin, "limits are per plugin")
        _ = scheduler.finish(first)
        let third = scheduler.begin()
        let thirdOne = scheduler.reserveCreation(of: "p", by: third, owned: 1, limit: 3)
        #expect(thirdOne, "a finished chain's plan is forgotten")
        let secondTwo = scheduler.reserveCreation(of: "p", by: second, owned: 2, limit: 3)
        #expect(!secondTwo, "the tree's own count is the caller's")
    }

    @Test(
        "chain scheduler: a plugin's request waits for exactly the chains that consulted that plugin, in arrival order")
    func schedulerOrdering() {
        var scheduler = ChainScheduler<String>()
        let one = scheduler.begin(), two = scheduler.begin(), three = scheduler.begin()
        scheduler.consult("a", incarnation: 1, by: one)
        scheduler.consult("a", incarnation: 1, by: two)
        scheduler.consult("b", incarnation: 1, by: three)
        let unrelated = scheduler.whenChainsConsulting("c", finish: "c-now")
        #expect(unrelated == "c-now", "no chain consulted c: run at once")
        let heldA1 = scheduler.whenChainsConsulting("a", finish: "a-1")
        #expect(heldA1 == nil)
        let heldA2 = scheduler.whenChainsConsulting("a", finish: "a-2")
        #expect(heldA2 == nil)
        let heldB1 = scheduler.whenChainsConsulting("b", finish: "b-1")
        #expect(heldB1 == nil)
        #expect(scheduler.waiting == 3)
        let afterOne = scheduler.finish(one)
        #expect(afterOne.isEmpty, "chain two still consulted a")
        let afterThree = scheduler.finish(three)
        #expect(afterThree == ["b-1"])
        let afterTwo = scheduler.finish(two)
        #expect(afterTwo == ["a-1", "a-2"])
        #expect(scheduler.waiting == 0)
        // A chain that begins after the request was queued does not hold it back.
        let four = scheduler.begin()
        scheduler.consult("a", incarnation: 1, by: four)
        let heldA3 = scheduler.whenChainsConsulting("a", finish: "a-3")
        #expect(heldA3 == nil)
        let five = scheduler.begin()
        scheduler.consult("a", incarnation: 1, by: five)
        let afterFour = scheduler.finish(four)
        #expect(afterFour == ["a-3"])
    }
}
