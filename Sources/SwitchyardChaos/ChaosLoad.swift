import SwitchyardProtocol
import Synchronization

// The load: clients that each send their next request once the last is settled (Jepsen's processes), at the
// spec's rate in total; every request an invoke and a completion in the history. Client 0 drives the victim's
// stack (pushes, pops, the user's dismissals and actions, sign-outs), so the model checker can fold its
// operations in order; the others deep-link, chain and switch tabs through the rest of the demo app.
extension ChaosExperiment {
    /// What one request does: its function and arguments (as the history records them) and the call.
    struct Request {
        let f: String
        let value: JSONValue?
        let call: @Sendable () async throws(ResponseError) -> UInt64
    }

    /// Requests each client sends after the last fault step of an experiment with host faults.
    static let requestsAfterHostFaults = 3

    func runLoad() async {
        let clock = ContinuousClock()
        let start = clock.now
        let end = start + .milliseconds(spec.durationMs)
        let clients = max(1, spec.load.clients ?? 4)
        let deadline = Duration.milliseconds(spec.requestDeadlineMs ?? 30_000)
        let interval = Duration.nanoseconds(Int64(1_000_000_000 / max(1, spec.load.rate)) * Int64(clients))
        let faults = Task {
            await runFaults(from: start)
            self.state.withLock { $0.faultsDone = true }
        }
        let watchdog = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(20))
                self.expire(olderThan: deadline)
            }
        }
        // Not awaited: a client waits for its request's answer, and one that never comes is lost at the deadline
        // rather than holding the experiment.
        let minimum = max(0, spec.load.minimumRequests ?? 0)
        // With the host's own faults, each client goes on until it has sent a few requests after the last fault
        // step: a host started again late in the run (a loaded machine takes seconds) is still seen serving.
        let after = spec.hasHostFaults ? Self.requestsAfterHostFaults : 0
        state.withLock { $0.owing = minimum > 0 || after > 0 ? clients : 0 }
        for client in 0..<clients {
            Task {
                var generator = SeededGenerator(seed: self.spec.seed &+ UInt64(client) &* 0x632B_E59B_D9B4_E019)
                var next = start
                var sent = 0
                var sentAfter = 0
                var owes = minimum > 0 || after > 0
                func owing() -> Bool {
                    sent < minimum || sentAfter < after
                }
                while next < end || owing() {
                    try? await Task.sleep(until: next, clock: clock)
                    guard clock.now < end || owing(), !Task.isCancelled else { break }
                    let faultsDone = self.state.withLock { $0.faultsDone }
                    let pick = Int(generator.next() % 1_000)
                    let detail = generator.next()
                    let request =
                        client == 0
                        ? await self.victimRequest(pick, detail) : self.appRequest(pick, detail, client: client)
                    await self.perform(request, client: client)
                    sent += 1
                    if faultsDone { sentAfter += 1 }
                    if owes && !owing() {
                        owes = false
                        self.state.withLock { $0.owing -= 1 }
                    }
                    next = max(next + interval, clock.now)
                }
                if owes { self.state.withLock { $0.owing -= 1 } }
            }
        }
        // A cancelled run (a test's time limit) does not go on killing and restarting hosts for the rest of its
        // schedule: the fault task ends with it.
        await withTaskCancellationHandler {
            try? await Task.sleep(until: end, clock: clock)
        } onCancel: {
            faults.cancel()
        }
        // A slow machine: the clients that have not sent their minimum yet go on (each request is bounded by the
        // host's own deadlines), and the load ends with them.
        while !Task.isCancelled, state.withLock({ $0.owing > 0 }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
        await faults.value
        state.withLock { $0.loadEnded = true }
        // A cancelled run (a test's time limit) stops waiting: its sleeps would return at once, a spin.
        while !Task.isCancelled, state.withLock({ !$0.inFlight.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
        watchdog.cancel()
    }

    /// Invokes, calls, and records the completion (unless the watchdog already recorded it lost).
    private func perform(_ request: Request, client: Int) async {
        let now = ContinuousClock.now
        // Registered under the lock that ends the load: a request is either waited for or never sent, so none is
        // left without a completion when the history is read.
        // The host lifetime the request is invoked in (a host run as a child): it goes to that host or nowhere, so
        // the checkers, which place it by its invoke, place it where it went.
        let lifetime = child?.lifetime
        let registered: Int? = state.withLock { state in
            guard !state.loadEnded else { return nil }
            state.nextOp += 1
            state.inFlight[state.nextOp] = (client, request.f, now)
            state.history.events.append(
                .operation(
                    .invoke, time: elapsed(now, in: state), op: state.nextOp, client: client, f: request.f,
                    value: request.value))
            return state.nextOp
        }
        guard let op = registered else { return }
        let outcome: Result<UInt64, ResponseError> = await ChildHost.$expectedLifetime.withValue(lifetime) {
            do throws(ResponseError) { return .success(try await request.call()) } catch { return .failure(error) }
        }
        let done = ContinuousClock.now
        state.withLock { state in
            guard state.inFlight.removeValue(forKey: op) != nil else { return }
            let time = elapsed(done, in: state)
            switch outcome {
            case .success(let revision):
                state.history.events.append(
                    .operation(.ok, time: time, op: op, client: client, f: request.f, revision: revision))
            case .failure(let error) where error.data?["hostKilled"] == .bool(true):
                // In flight as the experiment killed the host: it may have happened (the state file decides).
                var event = HistoryEvent.operation(
                    .info, time: time, op: op, client: client, f: request.f, error: error.message)
                event.cause = "hostKilled"
                state.history.events.append(event)
            case .failure(let error) where error.data?["noAnswer"] == .bool(true):
                // The connection ended without an answer, and not by the experiment's doing: it may have happened,
                // and nobody will say; a lost request.
                state.history.events.append(
                    .operation(.info, time: time, op: op, client: client, f: request.f, error: error.message))
            case .failure(let error):
                state.history.events.append(
                    .operation(
                        .fail, time: time, op: op, client: client, f: request.f,
                        error: "\(error.code.name): \(error.message)"))
            }
        }
    }

    private func expire(olderThan deadline: Duration) {
        let now = ContinuousClock.now
        state.withLock { state in
            for (op, request) in state.inFlight where now - request.at > deadline {
                state.inFlight[op] = nil
                state.history.events.append(
                    .operation(
                        .info, time: elapsed(now, in: state), op: op, client: request.client, f: request.f,
                        error: "no answer within \(deadline)"))
            }
        }
    }

    /// Weighted choice of a request kind; `pick` is in 0..<1000.
    private func kind(_ pick: Int, among kinds: [(String, Int?)]) -> String? {
        let weighted = kinds.compactMap { name, weight in weight.map { (name, max(0, $0)) } }
        let total = weighted.map(\.1).reduce(0, +)
        guard total > 0 else { return nil }
        var roll = pick % total
        for (name, weight) in weighted {
            if roll < weight { return name }
            roll -= weight
        }
        return nil
    }

    /// Client 0's next request, on the victim's stack as it is now (this client alone changes it).
    func victimRequest(_ pick: Int, _ detail: UInt64) async -> Request {
        let mix = spec.load.mix ?? .standard
        let victim = spec.victimName
        let chosen =
            kind(
                pick,
                among: [
                    ("chain", mix.chains), ("action", mix.actions), ("dismissal", mix.dismissals),
                    ("signOut", mix.signOuts),
                ]) ?? "chain"
        let instance = await host.snapshot().instances.first { $0.plugin == victim }
        let entries = instance?.entries ?? []
        let host = self.host
        guard let id = instance?.id else {
            return Request(f: "push", value: nil) { () throws(ResponseError) in
                throw ResponseError(.instanceNotFound, "no \(victim) instance in the tree now")
            }
        }
        switch chosen {
        case "signOut":
            return Request(f: "signOut", value: nil) { () throws(ResponseError) in
                try await host.navigate([
                    .setRoot("unauthenticated"), .parent, .setRoot("authenticated", ["user": "chaos"]),
                ])
            }
        case "action" where !entries.isEmpty:
            let index = entries.count - 1
            return Request(f: "action", value: ["index": .int(Int64(index))]) { () throws(ResponseError) in
                try await host.userAction(instance: id, entry: entries[index].entry, action: "close")
            }
        case "dismissal" where !entries.isEmpty:
            let index = Int(detail % UInt64(entries.count))
            return Request(f: "dismiss", value: ["index": .int(Int64(index))]) { () throws(ResponseError) in
                try await host.userDismissed(instance: id, entry: entries[index].entry)
            }
        default:
            // A stack kept short (a pop to its root at 16 entries): the history records it at every revision.
            if detail % 4 == 0 || entries.count >= 16 {
                return Request(f: "popToRoot", value: nil) { () throws(ResponseError) in
                    try await host.navigate(from: id, [.popToRoot])
                }
            }
            let params: JSONValue = ["id": .string(String(detail % 1_000))]
            return Request(f: "push", value: ["route": "sample", "params": params]) { () throws(ResponseError) in
                try await host.navigate(from: id, [.route("sample", params)])
            }
        }
    }

    /// Another client's next request: deep links through up to four plugins (a few refused by a guard: project
    /// p2 is archived), chains in other plugins, tab switches.
    func appRequest(_ pick: Int, _ detail: UInt64, client: Int) -> Request {
        let mix = spec.load.mix ?? .standard
        let chosen = kind(pick, among: [("link", mix.links), ("chain", mix.chains), ("tab", mix.tabs)]) ?? "link"
        let host = self.host
        let project = ["p1", "p2", "p7"][Int(detail % 3)]
        switch chosen {
        case "chain":
            let plugin = detail % 2 == 0 ? "todos" : "projects"
            return Request(f: "chain", value: ["plugin": .string(plugin), "steps": "popToRoot"]) {
                () throws(ResponseError) in
                let instances = await host.snapshot().instances
                guard let target = instances.first(where: { $0.plugin == plugin && $0.type == plugin }) else {
                    throw ResponseError(.instanceNotFound, "no \(plugin) instance in the tree now")
                }
                return try await host.navigate(from: target.id, [.popToRoot])
            }
        case "tab":
            let tab = ["todos", "projects", "profile"][Int(detail % 3)]
            return Request(f: "tab", value: ["tab": .string(tab)]) { () throws(ResponseError) in
                guard let home = await host.snapshot().instances.first(where: { $0.type == "home" }) else {
                    throw ResponseError(.instanceNotFound, "no home in the tree now")
                }
                return try await host.navigate(from: home.id, [.selectTab(tab)])
            }
        default:
            let url =
                switch detail % 3 {
                case 0: "switchyard://todos/todo/\(["1", "7", "42", "99"][Int(detail / 3 % 4)])"
                case 1: "switchyard://projects/\(project)"
                default: "switchyard://projects/\(project)/members"
                }
            return Request(f: "link", value: ["url": .string(url)]) { () throws(ResponseError) in
                try await host.open(url)
            }
        }
    }
}
