import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardSpec

/// The main conversation with the plugin, in the order a host has it: the handshake and route table, every
/// coordinator type created, routed, deep-linked, then the robustness checks on the live instances, then destroy,
/// `shutdown` and `exit`.
final class MainSession {
    let session: PluginSession
    let ledger: Ledger
    let record: Recorder
    let samples: Int
    var readyAfter: Duration?
    /// What the plugin said about itself in the handshake.
    var pluginInfo: PluginInfo?
    /// What its route table promises (§19), when the handshake completed.
    var contract: RouteContract?
    var model: HostModel?
    /// One tree per coordinator type, its root an instance of that type.
    var trees: [(type: String, tree: NavigationTree)] = []
    var timings: [RouteTiming] = []
    /// `coordinator/destroy` answers to check (from chains' effects and the final teardown).
    var destroyed: [Destroyed] = []

    /// The protocol's schemas, from the copy built into the checker (one validator per thread: it caches).
    let validator = SchemaValidator(documents: EmbeddedSchemas.documents)

    init(session: PluginSession, ledger: Ledger, samples: Int) {
        self.session = session
        self.ledger = ledger
        self.samples = samples
        record = Recorder(session: session, ledger: ledger)
    }

    static let coordinatorChecks: [CheckID] = [
        .create, .route, .paramTypes, .deepLink, .destroy, .restore, .ping, .timing,
    ]
    static let liveChecks: [CheckID] = [
        .ping, .unknownMethod, .unknownMembers, .lineLimit, .timing, .destroy, .shutdown,
    ]

    /// Runs the conversation; returns the trees (as they stood before teardown) for the restore session.
    func run() -> [(type: String, tree: NavigationTree)] {
        defer { session.end() }
        guard let result = handshake() else {
            ledger.skip(CheckID.allCases.filter { $0 != .handshake }, "the handshake failed (see handshake)")
            return []
        }
        // Whatever ends the conversation, what the plugin sent before `initialized` is judged (§3.2).
        defer { checkEarlyRequests() }
        let composes = checkComposition(result)
        session.notify(InitializedNotification.method)
        let model = HostModel(plugin: session.launch.pluginName, coordinators: result.coordinators)
        self.model = model
        if composes {
            checkCoordinators(model)
        } else {
            ledger.skip(
                Self.coordinatorChecks,
                "the host leaves this plugin out: its route table does not compose (see route-table)")
        }
        let snapshot = trees
        if let reason = session.unusable {
            ledger.skip(Self.liveChecks + [.restore], "not run: \(reason)")
            return snapshot
        }
        live(.ping, checkPingWhileBusy)
        live(.unknownMethod, checkUnknownMethod)
        live(.unknownMembers, checkUnknownMembersLive)
        live(.lineLimit, checkLongLine)
        live(.timing, measureRoundTrips)
        destroyAll(model)
        checkDestroyed()
        live(.shutdown, checkShutdown)
        return snapshot
    }

    /// Runs a selected check while the plugin can still answer; once a request went unanswered the host would have
    /// killed it (§16), so what follows is not run rather than failed again.
    private func live(_ id: CheckID, _ check: () -> Void) {
        guard ledger.wants(id) else { return }
        if let reason = session.unusable {
            ledger.skip(id, "not run: \(reason)")
        } else {
            check()
        }
    }

    /// §3.2: before the handshake completes a plugin may send only `$/ping` and `log`.
    func checkEarlyRequests() {
        for problem in session.earlyRequests.prefix(20) {
            ledger.add(
                .handshake,
                Finding(
                    .fail,
                    "stdout line \(problem.line): the plugin sent '\(problem.detail)' before initialized (answered -32001 notInitialized)",
                    expected: "only $/ping and log before the handshake completes (§3.2)",
                    exchange: session.exchange(around: problem.position)))
        }
    }

    // MARK: - Teardown

    /// Every instance of the plugin in every tree, deepest first (children before their parents, §8).
    func destroyAll(_ model: HostModel) {
        for (_, tree) in trees {
            guard let root = tree.rootID else { continue }
            for id in tree.subtree(of: root) {
                guard let instance = tree[id], instance.plugin == model.plugin else { continue }
                if let reason = session.unusable {
                    ledger.skip(.destroy, "not run: \(reason)")
                    return
                }
                destroyed.append(session.destroy(id, type: instance.type))
            }
        }
        trees = []
    }

    /// A `coordinator/destroy` sent, with its answer and the exchange that shows it.
    struct Destroyed {
        let instance: InstanceID
        let type: String
        let reply: Reply
        let exchange: [ExchangeLine]
    }

    /// §8 coordinator/destroy: `{}` for every instance.
    func checkDestroyed() {
        guard ledger.wants(.destroy), !destroyed.isEmpty else { return }
        var answered = 0
        for item in destroyed {
            let what = "coordinator/destroy of \(item.type) \(item.instance)"
            switch item.reply {
            case .result: answered += 1
            case .error(let error):
                ledger.add(
                    .destroy,
                    Finding(
                        .fail,
                        "\(what) was answered with the error \(error.code.rawValue) \(error.code.name): \(error.message)",
                        expected: "{} (release the instance; the host has already removed it)", exchange: item.exchange,
                        stderr: session.stderrTail))
            case .timeout, .ended:
                ledger.add(
                    .destroy,
                    Finding(
                        .fail, "\(what): \(item.reply.description)", expected: "an answer within requestTimeoutMs",
                        exchange: item.exchange, stderr: session.stderrTail))
            }
        }
        ledger.note(.destroy, "\(answered) of \(destroyed.count) instance(s) destroyed")
    }

    /// §3.5–3.6: `shutdown` is answered and the process stays until `exit`, which ends it with status 0.
    func checkShutdown() {
        let mark = session.mark
        let reply = session.request(ShutdownRequest.method, [:])
        guard case .result = reply else {
            if case .error(let error) = reply {
                record.fail(
                    .shutdown, "shutdown was answered with the error \(error.code.rawValue): \(error.message)",
                    expected: "{}", since: mark)
            } else {
                record.noAnswer(.shutdown, "shutdown", reply, since: mark)
            }
            return
        }
        // Still there: a ping is answered after shutdown (the plugin must not exit before exit).
        let ping = session.request(PingRequest.method, [:])
        if case .result = ping {
        } else {
            record.fail(
                .shutdown, "after answering shutdown, $/ping got \(ping.description)",
                expected: "the plugin waits for exit, and answers $/ping at any time (§3.4, §3.5)", since: mark)
        }
        session.notify(ExitNotification.method)
        // stdin stays open: a plugin that only leaves at end of file must not pass for one that obeys exit.
        let status = session.waitForExit(milliseconds: 2_000)
        switch status {
        case nil:
            record.fail(
                .shutdown, "the process was still running 2 s after exit",
                expected: "exit at once after the exit notification (§3.6)", since: mark)
        case 0?:
            ledger.note(.shutdown, "shutdown answered, exit ended the process with status 0")
        case let code?:
            record.fail(
                .shutdown, "after shutdown and exit the process ended with status \(code)",
                expected: "status 0 (exit after shutdown, §3.6)", since: mark)
        }
    }
}
