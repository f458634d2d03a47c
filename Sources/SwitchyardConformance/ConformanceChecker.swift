public import SwitchyardNavigation
public import SwitchyardProtocol
import SwitchyardSystem
import Synchronization
import SwitchyardSpec

/// What to run.
public struct CheckOptions: Sendable {
    /// The checks to run and report (all by default).
    public var only: Set<CheckID>
    /// How many route round trips `timing` measures.
    public var timingSamples: Int

    public init(only: Set<CheckID> = Set(CheckID.allCases), timingSamples: Int = 100) {
        self.only = only
        self.timingSamples = timingSamples
    }
}

/// The outcome of `check-plugin`: one result per check, in catalogue order.
public struct ConformanceReport: Sendable {
    public let launch: PluginLaunch
    /// What the plugin said about itself in the handshake, when it completed.
    public let plugin: PluginInfo?
    /// The contract of the route table it declared (what `switchyard contract export` writes), when the handshake
    /// completed.
    public let contract: RouteContract?
    public let results: [CheckResult]

    /// Whether any check failed (the command's exit status is non-zero then).
    public var failed: Bool { results.contains { $0.status == .fail } }
}

/// Runs a plugin executable on its own through the conformance checks (``CheckID``): the host's part is played by
/// the host's own pure code (chains, deep links, composition), each check in the process it needs, processes in
/// parallel where they are independent, every wait bounded.
public enum ConformanceChecker {
    public static func run(_ launch: PluginLaunch, options: CheckOptions = CheckOptions()) -> ConformanceReport {
        let ledger = Ledger(selected: options.only)
        let sessions = Mutex<[PluginSession]>([])
        let plugin = Mutex<(info: PluginInfo, contract: RouteContract?)?>(nil)
        let starting = Mutex<String?>(nil)

        /// Starts a process for a session; nil (and the reason noted) when it cannot be spawned.
        @Sendable func start() -> PluginSession? {
            do {
                let session = try PluginSession(launch)
                sessions.withLock { $0.append(session) }
                return session
            } catch {
                starting.withLock { $0 = $0 ?? "cannot start \(launch.command.first ?? "?"): \(error)" }
                return nil
            }
        }

        var threads: [SystemThread] = []
        func spawn(_ body: @escaping @Sendable () -> Void) {
            do { threads.append(try SystemThread.spawn(body)) } catch { body() }
        }
        let samples = options.timingSamples
        spawn {
            guard let session = start() else { return }
            let main = MainSession(session: session, ledger: ledger, samples: samples)
            let trees = main.run()
            plugin.withLock { $0 = main.pluginInfo.map { ($0, main.contract) } }
            guard ledger.wants(.restore), let model = main.model else { return }
            guard !trees.isEmpty else {
                ledger.skip(.restore, "no instance to restore: none was created (see create)")
                return
            }
            guard let restart = start() else { return }
            LifecycleChecks.restore(restart, ledger, trees: trees, model: model)
        }
        if ledger.wants(.versionNegotiation) {
            spawn { if let session = start() { LifecycleChecks.versionNegotiation(session, ledger) } }
        }
        if ledger.wants(.eof) || ledger.wants(.unknownMembers) {
            spawn { if let session = start() { LifecycleChecks.endOfFile(session, ledger, restart: start) } }
        }
        if ledger.wants(.exitWithoutShutdown) {
            spawn { if let session = start() { LifecycleChecks.exitWithoutShutdown(session, ledger) } }
        }
        for thread in threads { thread.join() }

        if let reason = starting.withLock({ $0 }) {
            ledger.add(
                .handshake, Finding(.fail, reason, expected: "an executable the checker can start (argv, no shell)"))
            ledger.skip(CheckID.allCases, "not run: \(reason)")
        }
        if ledger.failed(.handshake) {
            ledger.supersede(
                [.unknownMembers, .eof, .exitWithoutShutdown], "not run: the handshake failed (see handshake)")
        }
        let all = sessions.withLock { $0 }
        StreamChecks(sessions: all, ledger: ledger, limits: launch.limits).run()
        let described = plugin.withLock { $0 }
        return ConformanceReport(
            launch: launch, plugin: described?.info, contract: described?.contract, results: ledger.results())
    }
}

/// The checks over everything every session read from the plugin's stdout.
struct StreamChecks {
    let sessions: [PluginSession]
    let ledger: Ledger
    let limits: PluginLimits

    func run() {
        guard !sessions.isEmpty else { return }
        var lines = 0, messages = 0
        for session in sessions {
            let garbage = session.garbage
            lines += garbage.count
            for problem in garbage.prefix(20) where ledger.wants(.stdout) {
                ledger.add(
                    .stdout,
                    Finding(
                        .fail, "stdout line \(problem.line) is not a protocol message: \(problem.detail)",
                        expected:
                            "only JSON-RPC messages on stdout, one per line; logs go to stderr or the log notification (§1, §4)",
                        exchange: session.exchange(around: problem.position), stderr: session.stderrTail))
            }
            for problem in session.oversize.prefix(20) where ledger.wants(.lineLimit) {
                ledger.add(
                    .lineLimit,
                    Finding(
                        .fail,
                        "stdout line \(problem.line) is \(problem.detail)+ bytes, over maxLineBytes (\(limits.maxLineBytes))",
                        expected:
                            "lines within the maxLineBytes announced in initialize (§6): the host drops a longer line, so its answer never arrives",
                        exchange: session.exchange(around: problem.position)))
            }
            messages += session.receivedCount
        }
        if ledger.wants(.stdout) {
            ledger.note(
                .stdout,
                "\(messages) message(s) read from \(sessions.count) process(es)\(lines > 0 ? ", \(lines) other line(s)" : "")"
            )
        }
        if ledger.wants(.messages) { checkMessages() }
    }

    /// §2, §9: every message against the envelope and its method's schema; every answer to a request of ours, once.
    private func checkMessages() {
        let validator = SchemaValidator(documents: EmbeddedSchemas.documents)
        var checked = 0
        var reported = 0
        for session in sessions {
            for problem in session.strayAnswers.prefix(20) {
                ledger.add(
                    .messages,
                    Finding(
                        .fail,
                        "stdout line \(problem.line) answers id \(problem.detail), which is no outstanding request of the host's",
                        expected:
                            "each request answered exactly once, with its own id (§2); an answer to an unknown id is a protocol error (§6)",
                        exchange: session.exchange(around: problem.position)))
            }
            for received in session.received {
                checked += 1
                let errors = Self.schemaErrors(received, validator)
                guard !errors.isEmpty, reported < 20 else { continue }
                reported += 1
                ledger.add(
                    .messages,
                    Finding(
                        .fail, "stdout line \(received.lineNumber): \(errors.prefix(3).joined(separator: "; "))",
                        expected:
                            "a message valid against Protocol/schema (envelope.json, and the method's params or result)",
                        exchange: session.exchange(around: received.position)))
            }
        }
        ledger.note(.messages, "\(checked) message(s) validated")
    }

    static func schemaErrors(_ received: ReceivedMessage, _ validator: SchemaValidator) -> [String] {
        do {
            var errors = try validator.validate(received.raw, against: "envelope.json")
            guard errors.isEmpty else { return errors }
            let schema = { (method: String) in
                ProtocolMethods.all.first { $0.method == method }.map { Self.schemaFile($0.method) }
            }
            switch received.message {
            case .response(_, let result):
                if let method = received.answersMethod, let file = schema(method) {
                    errors += try validator.validate(result, against: "\(file)#/$defs/result").map {
                        "result of \(method): \($0)"
                    }
                }
            case .request(_, let method, let params), .notification(let method, let params):
                guard let file = schema(method) else { return ["'\(method)' is not a method of the protocol (§8)"] }
                errors += try validator.validate(params ?? [:], against: "\(file)#/$defs/params").map {
                    "params of \(method): \($0)"
                }
            case .errorResponse:
                break
            }
            return errors
        } catch {
            return ["the schema could not be applied: \(error)"]
        }
    }

    /// `coordinator/create` → `coordinator.create.json`, `$/ping` → `ping.json` (as `methods.json` lists them).
    static func schemaFile(_ method: String) -> String {
        method == PingRequest.method ? "ping.json" : method.replacing("/", with: ".") + ".json"
    }
}
