public import SwitchyardNavigation
import SwitchyardProtocol

/// The model checker (Protocol/README.md §22.3): the victim's stack, folded from the acknowledged operations through
/// the host's own pure navigation core (``ChainRunner`` on a ``NavigationTree``), with the victim's answers played
/// as a correct misbehaving plugin gives them (a route's screen shows its params; a new stack's root is `bench`).
///
/// Client 0 alone drives the victim's stack, one operation at a time, so its operations are totally ordered and
/// each one applied to the tree of the revision before its answer. After each acknowledged operation the model's
/// stack must equal the stack the host published at the revision it answered (routes, params and content, entry ids
/// aside: the model numbers its own). A failed operation changes nothing; an `info` (no answer) ends the check as
/// indeterminate. A wrong answer from the plugin is a tree the host applies faithfully and the model does not.
public struct VictimModel: Sendable {
    /// The model's stack: a tree holding the victim's instance alone, and the ids it allocates from (one allocator
    /// for the whole fold, as the host has one for its tree).
    struct Stack {
        var tree: NavigationTree
        let instance: InstanceID
        let allocator: IDAllocator
    }

    public let plugin: String
    public let type: String
    let registry: RouteRegistry

    /// The model of `plugin`'s coordinator `type` (the victim plays its name as its type), declared as in `registry`.
    public init(plugin: String, type: String, registry: RouteRegistry) {
        self.plugin = plugin
        self.type = type
        self.registry = registry
    }

    /// The model's fold of `history`, compared with what the host published after each acknowledged operation.
    public func check(_ history: History) -> CheckerResult {
        let checker = ExperimentSpec.Checker.model
        // The published stacks by host lifetime: a host the experiment killed and started again begins a new one,
        // from the tree it served first (its revisions may repeat the old host's).
        var epochs: [[HistoryEvent]] = [[]]
        var epochOf: [Int: Int] = [:]
        for event in history.events {
            if event.type == .tree { epochs[epochs.count - 1].append(event) }
            if event.type == .host, event.state == "restarted" {
                var start = HistoryEvent(type: .tree, time: event.time)
                start.revision = event.served
                start.instance = event.instance
                epochs.append([start])
            }
            if event.type == .invoke, event.client == 0, let op = event.op { epochOf[op] = epochs.count - 1 }
        }
        guard let start = epochs[0].first else {
            return CheckerResult(checker: checker, violations: [], summary: "no revision published: nothing to check")
        }
        var state: Stack?
        if let instance = start.instance { state = adopt(instance) }
        // What the host had published when each of client 0's operations was invoked: where the model starts again
        // after a placeholder it could not follow (filled by the host, not by an operation), or after a host kill.
        var publishedAtInvoke: [Int: HistoryEvent] = [:]
        var latest = start
        for event in history.events {
            if event.type == .tree { latest = event }
            if event.type == .host, event.state == "restarted" {
                latest = event
                latest.revision = event.served
            }
            if event.type == .invoke, event.client == 0, let op = event.op { publishedAtInvoke[op] = latest }
        }
        var checked = 0
        var epoch = 0
        var indeterminate = 0
        // The newest revision the model has followed (an acknowledged operation's, or a new host's first): a stack
        // to start again from must be no older, or the model would take back what it has seen done.
        var followed = start.revision ?? 0
        for operation in history.operations where operation.invoke.client == 0 {
            guard let done = operation.completion else { break }
            let op = operation.invoke.op ?? -1
            let published = epochs[epochOf[op] ?? epoch]
            if let next = epochOf[op], next != epoch {
                // A new host: what it restored may lack the last acknowledged changes (within §17's bound, which the
                // host checker judges); the model follows it from there.
                epoch = next
                state = nil
                followed = published.first?.revision ?? 0
            }
            // Only an acknowledged operation has a revision to start again before: a failed one changed nothing.
            if state == nil, done.type == .ok,
                let current = Self.restartPoint(
                    atInvoke: publishedAtInvoke[op], after: followed, before: done.revision, in: published)
            {
                state = adopt(current)
            }
            if done.type == .info, done.cause == "hostKilled" {
                indeterminate += 1
                state = nil
                continue
            }
            switch done.type {
            case .fail: continue
            case .info:
                return CheckerResult(
                    checker: checker, violations: [],
                    summary: "\(checked) operations checked; indeterminate from op \(op) on (no answer)")
            default: break
            }
            guard let revision = done.revision else { continue }
            let expected: Stack?
            switch apply(operation.invoke, to: state) {
            case .success(let next): expected = next
            case .failure(let error):
                return violation(
                    "op \(op) (\(operation.invoke.f ?? "?")) was acknowledged at revision \(revision), but the model refuses it: \(error.message)",
                    checked: checked)
            }
            let observed = published.last { ($0.revision ?? 0) <= revision }?.instance
            let want = expected.flatMap { $0.tree.snapshot(of: $0.instance) }.map(Self.stack) ?? []
            let seen = observed.map(Self.stack) ?? []
            // A stack replaced while the victim was down is a placeholder until the host fills it.
            let placeholderAccepted = operation.invoke.f == "signOut" && observed?.root == nil
            if want != seen && !placeholderAccepted {
                // The first entry that differs, rather than two whole stacks.
                let index =
                    (0..<min(want.count, seen.count)).first { want[$0] != seen[$0] } ?? min(want.count, seen.count)
                func entry(_ stack: [JSONValue]) -> String {
                    stack.indices.contains(index) ? JSONWriter.string(stack[index]) : "none"
                }
                return violation(
                    "op \(op) (\(operation.invoke.f ?? "?") \(operation.invoke.value.map(JSONWriter.string) ?? "")) acknowledged at revision \(revision): entry \(index) of the stack (of \(want.count) in the model, \(seen.count) in the host) is \(entry(want)) in the model, \(entry(seen)) in the host",
                    checked: checked)
            }
            state = placeholderAccepted && want != seen ? nil : expected
            followed = revision
            checked += 1
        }
        return CheckerResult(
            checker: checker, violations: [],
            summary:
                "\(checked) acknowledged operations on '\(plugin)' folded through the navigation core: the model's stack equals the host's after each"
                + (epochs.count > 1
                    ? " (across \(epochs.count) host lifetimes; \(indeterminate) in flight at a kill)" : "")
        )
    }

    private func violation(_ text: String, checked: Int) -> CheckerResult {
        CheckerResult(
            checker: .model, violations: [text],
            summary: "\(checked) operations agreed with the model, then one did not")
    }

    /// Where the model starts again after a placeholder: the stack the host had published when the operation was
    /// invoked, or, when the history had not recorded the host's fill yet (the events stream lags the host on a busy
    /// machine), the newest filled stack published before the operation's own revision: client 0 alone changes the
    /// stack, so nothing else came between. Either must be no older than `followed`, the newest revision the model
    /// has followed: a lagging stream can leave an older stack as "the latest" at an invoke (a stack from before a
    /// sign-out the model has already seen acknowledged).
    static func restartPoint(
        atInvoke: HistoryEvent?, after followed: UInt64, before revision: UInt64?, in published: [HistoryEvent]
    ) -> InstanceSnapshot? {
        if let atInvoke, let instance = atInvoke.instance, instance.root != nil,
            (atInvoke.revision ?? 0) >= followed
        {
            return instance
        }
        guard let revision else { return nil }
        return published.last { event in
            let at = event.revision ?? 0
            return at < revision && at >= followed && event.instance?.root != nil
        }?.instance
    }

    /// The stack as the checker compares it: each entry's route, params and content.
    static func stack(_ instance: InstanceSnapshot) -> [JSONValue] {
        ([instance.root].compactMap { $0 } + (instance.entries ?? [])).map { entry in
            var object: JSONObject = ["route": .string(entry.route)]
            object["params"] = entry.params
            object["content"] = try? Coding.encode(entry.content)
            return .object(object)
        }
    }

    /// A tree holding only `instance`, as the model's starting point.
    func adopt(_ instance: InstanceSnapshot) -> Stack? {
        var alone = instance
        alone.parent = nil
        let snapshot = TreeSnapshot(revision: 0, root: instance.id, instances: [alone])
        guard let tree = try? NavigationTree(snapshot: snapshot) else { return nil }
        return Stack(tree: tree, instance: instance.id, allocator: IDAllocator(continuing: tree))
    }

    /// One operation of client 0 on the model.
    func apply(
        _ invoke: HistoryEvent, to state: Stack?
    ) -> Result<Stack?, ResponseError> {
        if invoke.f == "signOut" { return fresh().map { $0 } }
        guard let state else { return .failure(ResponseError(.instanceNotFound, "the model has no stack")) }
        let steps: [NavigationStep]
        switch invoke.f {
        case "push":
            steps = [.route(invoke.value?["route"]?.stringValue ?? "", invoke.value?["params"])]
        case "popToRoot": steps = [.popToRoot]
        case "dismiss", "action":
            let entries = state.tree.snapshot(of: state.instance)?.entries ?? []
            guard let index = invoke.value?["index"]?.intValue.map(Int.init), entries.indices.contains(index) else {
                return .failure(ResponseError(.invalidParams, "the model's stack has no entry at that index"))
            }
            steps = [.pop(entries[index].entry)]
        default: return .success(state)
        }
        let runner = ChainRunner(
            tree: state.tree, registry: registry, allocator: state.allocator, start: state.instance, steps: steps)
        return drive(runner).map { Stack(tree: $0, instance: state.instance, allocator: state.allocator) }
    }

    /// A new stack of the victim's type, as a sign-in creates it.
    func fresh() -> Result<Stack, ResponseError> {
        let allocator = IDAllocator()
        let runner = ChainRunner.creatingRoot(
            tree: NavigationTree(), registry: registry, allocator: allocator,
            root: RouteRegistry.TypeKey(plugin: plugin, type: type))
        return drive(runner).flatMap { tree in
            guard let root = tree.rootID else { return .failure(ResponseError(.internalError, "no root created")) }
            return .success(Stack(tree: tree, instance: root, allocator: allocator))
        }
    }

    /// Runs a chain to its end, answering for the victim.
    private func drive(_ runner: ChainRunner) -> Result<NavigationTree, ResponseError> {
        while true {
            switch runner.advance() {
            case .done(let result): return .success(result.tree)
            case .failed(let failure): return .failure(failure.error)
            case .needs(.route(let question)):
                let answer: JSONValue = [
                    "content": ["screen": ["name": .string(question.route), "props": question.params ?? [:]]]
                ]
                runner.resume(with: .route(Self.decode(answer)))
            case .needs(.create):
                let answer: JSONValue = [
                    "root": ["route": "bench", "content": ["screen": ["name": "Bench", "props": [:]]]]
                ]
                runner.resume(with: .create(Self.decode(answer)))
            }
        }
    }

    private static func decode<T: Decodable>(_ value: JSONValue) -> Result<T, ResponseError> {
        do { return .success(try Coding.decode(T.self, from: value)) } catch {
            return .failure(ResponseError(.internalError, "the model's answer does not decode: \(error)"))
        }
    }
}
