import SwitchyardNavigation
import SwitchyardProtocol

/// The checks that need a process of their own: how a plugin starts when it cannot agree on a version, and how it
/// ends (exit without shutdown, stdin's end of file), and how it comes back (restore after a restart).
enum LifecycleChecks {
    /// An unknown version no host speaks.
    static let unknownVersion = 999

    /// §3.1: offered only a version it does not speak, the plugin answers -32002 with the versions it speaks.
    static func versionNegotiation(_ session: PluginSession, _ ledger: Ledger) {
        defer { session.end() }
        let record = Recorder(session: session, ledger: ledger)
        let mark = session.mark
        let reply = session.initialize(versions: [unknownVersion])
        let expected =
            "the error -32002 unsupportedProtocolVersion with data.supported listing the versions it speaks (integers)"
        switch reply {
        case .error(let error) where error.code == .unsupportedProtocolVersion:
            guard let supported = error.data?["supported"]?.arrayValue, !supported.isEmpty,
                supported.allSatisfy({ $0.intValue != nil })
            else {
                record.fail(
                    .versionNegotiation,
                    "-32002 without data.supported as a list of versions (data: \(error.data.map(JSONWriter.string) ?? "none"))",
                    expected: expected, since: mark)
                return
            }
            ledger.note(
                .versionNegotiation,
                "offered [\(unknownVersion)]: -32002, supported \(JSONWriter.string(.array(supported)))")
        case .error(let error):
            record.fail(
                .versionNegotiation,
                "offered only version \(unknownVersion): answered \(error.code.rawValue) \(error.code.name): \(error.message)",
                expected: expected, since: mark)
        case .result(let value):
            let chosen = value["protocolVersion"].map(JSONWriter.string) ?? "none"
            record.fail(
                .versionNegotiation,
                "offered only version \(unknownVersion): answered a result choosing version \(chosen)",
                expected: expected + " (a result naming a version that was not offered is refused, §3.1)", since: mark)
        case .timeout, .ended:
            record.noAnswer(
                .versionNegotiation, "initialize offering only version \(unknownVersion)", reply, since: mark)
        }
    }

    /// §4: the plugin exits within 2 s of stdin's end of file; and §2: `initialize` with members it does not know
    /// (envelope, params, limits) is answered as without them.
    static func endOfFile(_ first: PluginSession, _ ledger: Ledger, restart: () -> PluginSession?) {
        var session = first
        defer { session.end() }
        var record = Recorder(session: session, ledger: ledger)
        let mark = session.mark
        let probing = ledger.wants(.unknownMembers)
        let (reply, result) = session.ready(unknownMembers: probing)
        if result == nil && !probing {
            ledger.skip(.eof, "not run: the handshake failed (see handshake)")
            return
        } else if result == nil {
            record.fail(
                .unknownMembers,
                "initialize with unknown members in the envelope, params and limits: \(reply.description)",
                expected:
                    "a valid result, as without them: receivers MUST ignore members they do not know and accept unknown limits (§2, §8 initialize)",
                since: mark)
            // The end-of-file check needs a plugin that completed a handshake: a plain one, in a fresh process.
            session.end()
            guard ledger.wants(.eof), let fresh = restart() else { return }
            session = fresh
            record = Recorder(session: session, ledger: ledger)
            guard session.ready().result != nil else {
                ledger.skip(.eof, "not run: the handshake failed (see handshake)")
                return
            }
        } else if probing {
            ledger.note(.unknownMembers, "ignored in initialize (envelope, params, limits)")
        }
        guard ledger.wants(.eof) else { return }
        let eofMark = session.mark
        let start = ContinuousClock.now
        session.closeStdin()
        if let status = session.waitForExit(milliseconds: 2_000) {
            ledger.note(
                .eof, "exited \(milliseconds(ContinuousClock.now - start)) ms after end of file (status \(status))")
        } else {
            record.fail(
                .eof, "the process was still running 2 s after its stdin reached end of file",
                expected:
                    "exit at stdin's end of file: it is how a plugin learns the host has gone (§4); the host sends SIGTERM 2 s later (§3.7)",
                since: eofMark)
        }
    }

    /// §3.6: `exit` without `shutdown` ends the process with status 1.
    static func exitWithoutShutdown(_ session: PluginSession, _ ledger: Ledger) {
        defer { session.end() }
        let record = Recorder(session: session, ledger: ledger)
        guard session.ready().result != nil else {
            ledger.skip(.exitWithoutShutdown, "not run: the handshake failed (see handshake)")
            return
        }
        let mark = session.mark
        session.notify(ExitNotification.method)
        switch session.waitForExit(milliseconds: 2_000) {
        case 1?: ledger.note(.exitWithoutShutdown, "status 1")
        case nil:
            record.fail(
                .exitWithoutShutdown, "the process was still running 2 s after exit",
                expected: "exit at once, with status 1 (§3.6)", since: mark)
        case let status?:
            record.fail(
                .exitWithoutShutdown, "exit without shutdown ended the process with status \(status)",
                expected: "status 1 (no shutdown came first, §3.6)", since: mark)
        }
    }

    /// §8, §16: a restarted plugin gets `coordinator/create` with reason `restore` for every instance it owned,
    /// parents first, all at once; it answers `{}` and then serves them (a route on each restored root).
    static func restore(
        _ session: PluginSession, _ ledger: Ledger, trees: [(type: String, tree: NavigationTree)], model: HostModel
    ) {
        defer { session.end() }
        let record = Recorder(session: session, ledger: ledger)
        guard session.ready(restarts: 1).result != nil else {
            ledger.skip(.restore, "not run: the handshake with restarts: 1 failed")
            return
        }
        var restored = 0, stateful = 0, refused = 0
        for (type, tree) in trees where session.unusable == nil {
            let mark = session.mark
            // All at once, as the host sends them (§8): the answers are collected afterwards.
            var pending: [(CoordinatorCreateRequest.Params, RequestID)] = []
            for params in tree.restoreRequests(for: model.plugin) {
                guard let encoded = try? Coding.encode(params) else { continue }
                let id = session.nextID(for: CoordinatorCreateRequest.method)
                session.send(.request(id: id, method: CoordinatorCreateRequest.method, params: encoded))
                pending.append((params, id))
                if params.state != nil { stateful += 1 }
            }
            var refusedHere = false
            for (params, id) in pending {
                let reply = session.wait(for: id, timeoutMs: session.launch.limits.requestTimeoutMs)
                let what = "restore of \(params.type) \(params.instance)\(params.state == nil ? "" : " with its state")"
                switch reply {
                case .result(let value) where value.objectValue != nil: restored += 1
                case .result(let value):
                    record.fail(
                        .restore, "\(what) was answered with \(JSONWriter.string(value))", expected: "{} (§8)",
                        since: mark)
                case .error(let error):
                    refused += 1
                    refusedHere = true
                    record.warn(
                        .restore, "\(what) was refused: \(error.code.rawValue) \(error.code.name): \(error.message)",
                        expected:
                            "{}: the instance and the state the plugin itself returned for it are all it needs; a refused restore leaves an instance no route of which works (§16)",
                        since: mark)
                case .timeout, .ended:
                    record.noAnswer(.restore, what, reply, since: mark)
                }
            }
            if !refusedHere { useRestored(type: type, tree: tree, model: model, session: session, record: record) }
        }
        ledger.note(
            .restore,
            "\(restored) instance(s) restored (\(stateful) with state)\(refused > 0 ? ", \(refused) refused" : "")")
    }

    /// After a restore, the plugin serves the instance: its first stack route is taken as the host would.
    private static func useRestored(
        type: String, tree: NavigationTree, model: HostModel, session: PluginSession, record: Recorder
    ) {
        guard let root = tree.rootID, let declaration = model.registry.declaration(plugin: model.plugin, type: type),
            let route = declaration.routes.first(where: { $0.transition.isStackEntry }), session.unusable == nil
        else { return }
        let mark = session.mark
        var timings: [RouteTiming] = []
        let runner = ChainRunner(
            tree: tree, registry: model.registry, allocator: model.allocator, start: root,
            steps: [.route(route.name, Values.params(for: route))])
        let expected =
            "the restored instance works like the original: \(MainSession.expectedAnswer(route, plugin: model.plugin))"
        switch session.drive(runner, model: model, timings: &timings) {
        case .done: break
        case .refused(let error, _, _) where error.code == .rejectedByGuard: break
        case .refused(let error, let method, _):
            record.fail(
                .restore,
                "route '\(route.name)' of the restored \(type) \(root): \(method) answered \(error.code.rawValue) \(error.code.name): \(error.message)",
                expected: expected, since: mark)
        case .invalidAnswer(let error, _, _):
            record.fail(
                .restore, "route '\(route.name)' of the restored \(type) \(root): \(error.message)", expected: expected,
                since: mark)
        case .noAnswer(let reply, let method):
            record.noAnswer(
                .restore, "route '\(route.name)' of the restored \(type) \(root): \(method)", reply, since: mark)
        }
    }
}
