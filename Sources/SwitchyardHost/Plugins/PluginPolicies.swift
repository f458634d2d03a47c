import DequeModule
package import SwitchyardProtocol

// The rules a plugin session enforces, as values with an injected clock: each takes `now` (milliseconds on the
// loop's running clock, `UVLoop.activeNow`, so the host's own stalls never count against a plugin) and answers
// with a decision. The session does the I/O; these decide. They are tested without processes or a loop.

/// What a plugin may send on its own: a token bucket for messages, a cap on its unanswered requests, and the
/// quarantine window for protocol errors (spec §6).
package struct AdmissionPolicy {
    package let messagesPerSecond: Int
    package let maxOutstandingRequests: Int
    package let maxProtocolErrors: Int
    package let errorWindowMs: UInt64

    private var tokens: Double
    private var refilledAt: UInt64?
    private var outstanding = Set<RequestID>()
    private var recentErrors = Deque<UInt64>()

    package init(
        messagesPerSecond: Int, maxOutstandingRequests: Int, maxProtocolErrors: Int, errorWindowMs: UInt64 = 10_000
    ) {
        self.messagesPerSecond = messagesPerSecond
        self.maxOutstandingRequests = maxOutstandingRequests
        self.maxProtocolErrors = maxProtocolErrors
        self.errorWindowMs = errorWindowMs
        tokens = Double(messagesPerSecond)
    }

    package init(_ limits: PluginLimits) {
        self.init(
            messagesPerSecond: limits.maxMessagesPerSecond, maxOutstandingRequests: limits.maxOutstandingRequests,
            maxProtocolErrors: limits.maxProtocolErrors)
    }

    /// Takes a token for one message; false if the plugin is over its rate (burst of `messagesPerSecond`).
    package mutating func takeToken(now: UInt64) -> Bool {
        let rate = Double(messagesPerSecond)
        let last = refilledAt ?? now
        tokens = min(rate, tokens + Double(now &- last) * rate / 1_000)
        refilledAt = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Whether an incoming request may be served now.
    package enum RequestVerdict: Equatable {
        case accepted
        /// Its id is the id of a request still unanswered.
        case duplicateID
        /// More than `maxOutstandingRequests` would be unanswered.
        case overLimit
    }

    /// Registers a request from the plugin unless its id is in use or too many are unanswered.
    package mutating func beginRequest(_ id: RequestID) -> RequestVerdict {
        if outstanding.contains(id) { return .duplicateID }
        if outstanding.count >= maxOutstandingRequests { return .overLimit }
        outstanding.insert(id)
        return .accepted
    }

    /// The host answered a request from the plugin.
    package mutating func endRequest(_ id: RequestID) { outstanding.remove(id) }

    /// Counts a protocol error; true when this one quarantines the plugin (more than `maxProtocolErrors` within
    /// `errorWindowMs`).
    package mutating func recordError(now: UInt64) -> Bool {
        recentErrors.append(now)
        while let first = recentErrors.first, now &- first > errorWindowMs || recentErrors.count > maxProtocolErrors + 1
        {
            recentErrors.removeFirst()
        }
        return recentErrors.count > maxProtocolErrors
    }

    /// Errors inside the current window.
    package var errorsInWindow: Int { recentErrors.count }
}

/// The heartbeat: a plugin silent for `intervalMs` gets a `$/ping`; unanswered for `timeoutMs`, it is hung.
package struct HeartbeatPolicy {
    package let intervalMs: UInt64
    package let timeoutMs: UInt64
    private var lastHeard: UInt64
    private var outstanding: (id: String, sentAt: UInt64)?
    private var count = 0

    package init(intervalMs: Int, timeoutMs: Int, now: UInt64) {
        self.intervalMs = UInt64(max(0, intervalMs))
        self.timeoutMs = UInt64(max(0, timeoutMs))
        lastHeard = now
    }

    /// Whether heartbeats are on (an interval of 0 turns them off).
    package var isEnabled: Bool { intervalMs > 0 }

    /// How often the session should call ``tick(now:)``: a quarter of the shorter period, at least 20 ms.
    package var tickMs: UInt64 { max(20, min(intervalMs, timeoutMs) / 4) }

    /// What the session must do at a tick.
    package enum Action: Equatable {
        case none
        /// Send `$/ping` with this (string) id: heartbeats use ids of their own (`hb-N`), so they never shift the
        /// numbering of the host's other requests.
        case ping(id: String)
        /// The ping sent `sinceMs` ago is unanswered: the plugin is hung.
        case hung(sinceMs: UInt64)
    }

    /// Anything from the plugin proves it alive.
    package mutating func heard(now: UInt64) { lastHeard = now }

    /// An answer to a request id; true if it was the heartbeat's (and so consumed here).
    package mutating func answered(_ id: RequestID) -> Bool {
        guard case .string(let text) = id, text == outstanding?.id else { return false }
        outstanding = nil
        return true
    }

    /// Judges at `now`. Call it only after the loop has read what the plugin sent (spec §6.1).
    package mutating func tick(now: UInt64) -> Action {
        guard isEnabled else { return .none }
        if let outstanding {
            let waited = now &- outstanding.sentAt
            return now >= outstanding.sentAt && waited >= timeoutMs ? .hung(sinceMs: waited) : .none
        }
        guard now >= lastHeard, now - lastHeard >= intervalMs else { return .none }
        count += 1
        let id = "hb-\(count)"
        outstanding = (id, now)
        return .ping(id: id)
    }
}

/// The write queue towards a plugin: over `limitBytes`, new requests are refused at once; the plugin is judged not
/// to read only when the queue did not shrink at all for `windowMs` (a slow reader on a starved machine still
/// reads); over twice the limit it is killed at once, to bound host memory (spec §6).
package struct WriteQueuePolicy {
    package let limitBytes: Int
    package let windowMs: UInt64
    private var stall: (queued: Int, since: UInt64)?

    package init(limitBytes: Int, windowMs: Int) {
        self.limitBytes = limitBytes
        self.windowMs = UInt64(max(1, windowMs))
    }

    /// Whether the queue is over the limit and being watched.
    package var isStalled: Bool { stall != nil }

    /// Whether a line of `bytes` may be queued on top of `queued` at all (twice the limit is the hard bound).
    package func fits(_ bytes: Int, queued: Int) -> Bool { queued + bytes <= 2 * limitBytes }

    /// Whether a new request must be refused now.
    package func refusesRequests(queued: Int) -> Bool { stall != nil && queued > limitBytes }

    /// After a write: true if the queue just went over the limit (the session logs it and starts the watch,
    /// calling ``judge(queued:now:)`` after ``windowMs``).
    package mutating func wrote(queued: Int, now: UInt64) -> Bool {
        guard stall == nil, queued > limitBytes else { return false }
        stall = (queued, now)
        return true
    }

    /// The verdict at a check.
    package enum Verdict: Equatable {
        /// Back under the limit: the watch ends.
        case recovered
        /// Still over the limit but read something (or not long enough): check again after `inMs`.
        case checkAgain(inMs: UInt64)
        /// Nothing read for `forMs`: the plugin does not read its stdin.
        case notReading(forMs: UInt64)
    }

    /// Judges the watch at `now` with `queued` bytes still queued.
    package mutating func judge(queued: Int, now: UInt64) -> Verdict {
        guard let current = stall else { return .recovered }
        if queued <= limitBytes {
            stall = nil
            return .recovered
        }
        var since = current.since
        if queued < current.queued {
            since = now
            stall = (queued, now)
        } else if now &- since >= windowMs {
            return .notReading(forMs: now &- since)
        }
        let due = since + windowMs
        return .checkAgain(inMs: due > now ? due - now : 1)
    }
}

/// One step of the shutdown ladder (swift-subprocess's `TeardownStep`, as data): what to do, and how long to wait
/// for the process to exit before the next step.
package enum TeardownStep: Equatable {
    /// Ask politely: the `shutdown` request (answered or timed out within `waitMs`), then the `exit` notification.
    case shutdownRequest(waitMs: Int)
    /// Close the plugin's stdin (it reads end of file) and wait.
    case closeStdin(waitMs: Int)
    /// Send a signal to its process group and wait (the last step's wait is the grace for SIGKILL's reaping).
    case signal(Int32, waitMs: Int)
}

extension TeardownStep {
    /// The host's ladder (spec §4): `shutdown`, `exit`, stdin closed, SIGTERM after `graceMs`, SIGKILL after another
    /// `graceMs`. A plugin that never completed its handshake skips the request.
    package static func ladder(
        graceMs: Int, shutdownTimeoutMs: Int, ready: Bool, term: Int32, kill: Int32
    ) -> [TeardownStep] {
        (ready ? [.shutdownRequest(waitMs: shutdownTimeoutMs)] : []) + [
            .closeStdin(waitMs: graceMs), .signal(term, waitMs: graceMs), .signal(kill, waitMs: 0),
        ]
    }
}
