public import SwitchyardProtocol

/// One line of an experiment's history (`history.jsonl`, Protocol/README.md §22.3, `schema/history.schema.json`).
///
/// As Jepsen's: every client operation is an `invoke`, then exactly one of `ok` (with the revision the host answered),
/// `fail` (a typed error: it did not happen) or `info` (no answer within the deadline: it may have happened). Beside
/// them what the experiment saw: each `fault` and its `heal`, each `plugin` state change, and each revision the host
/// published (`tree`, with the victim's instance, what the model checker compares).
public struct HistoryEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case invoke, ok, fail, info, fault, heal, plugin, tree
        /// The host itself, under a host fault: `killed`, `restarted`, `stateFileFailing`, `stateFileWritten`,
        /// `exited` (on its own: a violation).
        case host
    }

    public var type: Kind
    /// Milliseconds since the load began.
    public var time: Double
    /// The operation (invoke, ok, fail, info).
    public var op: Int?
    public var client: Int?
    /// The operation's function: `push`, `popToRoot`, `dismiss`, `action`, `signOut` (the victim's stack, client
    /// 0) or `link`, `chain`, `tab` (the rest of the app).
    public var f: String?
    /// The operation's arguments: `{route, params}`, `{index}` (which entry of the victim's stack), `{url}`…
    public var value: JSONValue?
    /// `ok`: the revision the host answered; `tree`: the revision published.
    public var revision: UInt64?
    /// `fail`, `info`: the error code's name and message.
    public var error: String?
    /// `info`: `hostKilled` when the operation was in flight as the experiment killed the host: it may have happened
    /// or not (the state file decides), and it is indeterminate rather than lost.
    public var cause: String?
    /// `fault`, `heal`: which fault of the schedule, its kind and targets.
    public var fault: Int?
    public var kind: String?
    public var plugins: [String]?
    /// `plugin`: the plugin, its state and restarts.
    public var plugin: String?
    public var state: String?
    public var restarts: Int?
    /// `plugin`: why it is not ready, as the host says it (`killed by the host: hung: …`); absent when ready.
    public var reason: String?
    /// `tree`: the victim's instance at that revision, as `tree/get` shows it (absent while it has none); `host`
    /// `restarted`: the victim's instance in the tree the new host served first.
    public var instance: InstanceSnapshot?
    /// `host` `killed`: the newest revision the host had said was in its state file just before the kill.
    public var written: UInt64?
    /// `host` `restarted`: the revision the new host served first (`revision` is the state file's).
    public var served: UInt64?

    public init(type: Kind, time: Double) {
        self.type = type
        self.time = time
    }

    /// An operation's event.
    public static func operation(
        _ type: Kind, time: Double, op: Int, client: Int, f: String, value: JSONValue? = nil,
        revision: UInt64? = nil, error: String? = nil
    ) -> HistoryEvent {
        var event = HistoryEvent(type: type, time: time)
        event.op = op
        event.client = client
        event.f = f
        event.value = value
        event.revision = revision
        event.error = error
        return event
    }

    /// The event as one line of `history.jsonl`.
    public var line: String {
        ((try? Coding.encode(self)).map(JSONWriter.string) ?? "{}") + "\n"
    }

    /// A line of `history.jsonl` read back.
    public init(line: String) throws {
        self = try Coding.decode(HistoryEvent.self, from: try JSONParser.parse(Array(line.utf8)))
    }
}

/// A history as a whole: its events in the order they were recorded, and what the checkers derive from it.
public struct History: Sendable {
    public var events: [HistoryEvent]

    public init(_ events: [HistoryEvent] = []) { self.events = events }

    /// `history.jsonl`'s text.
    public var jsonl: String { events.map(\.line).joined() }

    /// Reads `history.jsonl`'s text (blank lines skipped).
    public init(jsonl: String) throws {
        events = try jsonl.split(separator: "\n").filter { !$0.isEmpty }.map { try HistoryEvent(line: String($0)) }
    }

    /// One operation: its invocation and its completion (nil: none was recorded).
    public struct Operation: Sendable {
        public let invoke: HistoryEvent
        public let completion: HistoryEvent?

        /// Milliseconds from invocation to an `ok`.
        public var latency: Double? {
            guard let completion, completion.type == .ok else { return nil }
            return completion.time - invoke.time
        }
    }

    /// The operations in order of invocation.
    public var operations: [Operation] {
        var completions: [Int: HistoryEvent] = [:]
        for event in events where [.ok, .fail, .info].contains(event.type) {
            if let op = event.op, completions[op] == nil { completions[op] = event }
        }
        return events.filter { $0.type == .invoke }.compactMap { invoke in
            invoke.op.map { Operation(invoke: invoke, completion: completions[$0]) }
        }
    }
}
