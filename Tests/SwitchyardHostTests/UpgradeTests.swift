import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// The versioned test plugin (Tests/Fixtures/plugins/versioned.py): one stack type, `notes`, whose flags make its
/// versions.
enum Versioned {
    static let script = "\(packageRoot)/Tests/Fixtures/plugins/versioned.py"

    static func entry(_ arguments: [String] = [], name: String = "notes") -> PluginManifest {
        PluginManifest(name: name, command: command(arguments))
    }

    static func command(_ arguments: [String]) -> [String] { [TestPlugins.python, script] + arguments }

    static func root(_ name: String = "notes") -> CoordinatorReference {
        CoordinatorReference(plugin: name, type: "notes")
    }

    /// What a screen says about the version that made it (`Note` and `Home` carry it).
    static func version(of snapshot: TreeSnapshot) -> String? {
        guard let root = snapshot.instances.first, let shown = (root.entries ?? []).last ?? root.root,
            case .screen(let screen) = shown.content
        else { return nil }
        return screen.props?["version"]?.stringValue
    }
}

/// Live upgrades of one plugin (Protocol/README.md §20.1): refused, rolled back before the switch, switched,
/// rolled back within the probation; requests held meanwhile. Real host, real plugin processes.
@Suite("Live upgrade", .heavy, .timeLimit(.minutes(1)))
struct UpgradeTests {
    @Test("a version that drops a route in use is refused, naming it; the old process keeps its pid and serves")
    func dropsRouteInUse() async throws {
        try await withHost([Versioned.entry()], root: Versioned.root()) { host in
            _ = try await host.navigate([.route("extra")])
            let before = await host.snapshot()
            let pid = try #require(await host.status().first?.pid)
            await #expect(throws: ResponseError.self) {
                _ = try await host.upgradePlugin(
                    .init(plugin: "notes", command: Versioned.command(["--version", "2.0.0", "--without", "extra"])))
            }
            do throws(ResponseError) {
                _ = try await host.upgradePlugin(
                    .init(plugin: "notes", command: Versioned.command(["--version", "2.0.0", "--without", "extra"])))
            } catch {
                #expect(error.code == .compositionError)
                #expect(error.message.contains("[ROUTE_REMOVED] /types/notes/routes/extra"), "\(error.message)")
                #expect(error.message.contains("the old version serves on"))
                #expect(error.data?["findings"]?.arrayValue?.count == 1)
            }
            let status = try #require(await host.status().first)
            #expect(status.pid == pid && status.version == "1.0.0" && status.state == .ready)
            #expect(status.upgrade?.phase == .refused)
            #expect(await host.snapshot() == before)
            _ = try await host.navigate([.route("note", ["id": "1"])])
            #expect(Versioned.version(of: await host.snapshot()) == "1.0.0")

            // Once nothing uses it, dropping the route is allowed, and the answer lists it as breaking but unused.
            _ = try await host.navigate([.popToRoot])
            let unused = try await host.upgradePlugin(
                .init(
                    plugin: "notes", command: Versioned.command(["--version", "2.0.0", "--without", "extra"]),
                    probationMs: 0))
            #expect(unused.changes.contains { $0.rule == "ROUTE_REMOVED" && $0.breaking })
            #expect(unused.to.version == "2.0.0" && unused.probation.state == .off)
        }
    }

    @Test("the instances move in one revision: ids and entries unchanged, state migrated, plugin/changed names both")
    func switchesInOneRevision() async throws {
        try await withHost([Versioned.entry()], root: Versioned.root()) { host in
            let events = EventLog(host)
            _ = try await host.navigate([.route("note", ["id": "1"]), .route("note", ["id": "2"])])
            let before = await host.snapshot()
            #expect(before.instances.first?.state?["count"] == .int(3))
            // A probation longer than the test: the phases below must not depend on how fast the machine is.
            let result = try await host.upgradePlugin(
                .init(
                    plugin: "notes", command: Versioned.command(["--version", "2.0.0", "--rename-state"]),
                    probationMs: 600_000))
            #expect(result.outcome == .upgraded && result.from.version == "1.0.0" && result.to.version == "2.0.0")
            #expect(result.instances == 1 && result.revision == before.revision + 1)
            #expect(result.from.pid != result.to.pid)
            #expect(result.probation.state == .running)
            let after = await host.snapshot()
            #expect(after.revision == before.revision + 1)
            // Everything but the migrated state is as it was.
            var migrated = before
            migrated.revision = after.revision
            migrated.instances[0].state = ["total": 3]
            #expect(after == migrated)
            // The history says what made the switch's revision (a reloaded Studio shows no gap there).
            let record = try await host.history(after: before.revision).revisions.first
            #expect(record?.revision == result.revision && record?.cause == .upgrade)
            #expect(record?.summary == "plugin 'notes' upgraded 1.0.0 → 2.0.0: 1 instance moved")
            // The new version serves, from the migrated state.
            _ = try await host.navigate([.route("note", ["id": "3"])])
            let served = await host.snapshot()
            #expect(Versioned.version(of: served) == "2.0.0")
            #expect(served.instances.first?.state?["total"] == .int(4))
            if let old = result.from.pid {
                #expect(SystemProcess.waitForExit(old, milliseconds: 5_000), "the old version stops")
            }
            let phases = events.all.compactMap { event -> String? in
                guard case .pluginChanged(let status) = event, let upgrade = status.upgrade else { return nil }
                return "\(upgrade.phase.rawValue) \(upgrade.from ?? "-")→\(upgrade.to ?? "-")"
            }
            #expect(
                phases == [
                    "starting 1.0.0→-", "holding 1.0.0→2.0.0", "migrating 1.0.0→2.0.0", "probation 1.0.0→2.0.0",
                ], "\(phases)")
        }
    }

    @Test("a failure while migrating rolls back before the switch: nothing changed, the old version serves")
    func migrationFailureRollsBack() async throws {
        try await withHost([Versioned.entry()], root: Versioned.root()) { host in
            _ = try await host.navigate([.route("note", ["id": "1"])])
            let before = await host.snapshot()
            let pid = await host.status().first?.pid
            do throws(ResponseError) {
                _ = try await host.upgradePlugin(
                    .init(plugin: "notes", command: Versioned.command(["--version", "2.0.0", "--fail-migrate"])))
                Issue.record("the upgrade succeeded")
            } catch {
                #expect(error.message.contains("rolled back before the switch, nothing changed"), "\(error.message)")
                #expect(error.message.contains("cannot read the state of version 1.0.0"))
                #expect(error.data?["rolledBack"] == true)
            }
            #expect(await host.snapshot() == before)
            let status = try #require(await host.status().first)
            #expect(status.pid == pid && status.version == "1.0.0" && status.upgrade?.phase == .failed)
            _ = try await host.navigate([.route("note", ["id": "2"])])
            #expect(Versioned.version(of: await host.snapshot()) == "1.0.0")
            // A new version that does not even start changes nothing either.
            await #expect(throws: ResponseError.self) {
                _ = try await host.upgradePlugin(
                    .init(plugin: "notes", command: [TestPlugins.python, "-c", "import sys; sys.exit(4)"]))
            }
            #expect(await host.status().first?.pid == pid)
        }
    }

    @Test("a crash of the new version within the probation brings the old one back, restored from the tree")
    func crashWithinProbationRollsBack() async throws {
        try await withHost([Versioned.entry()], root: Versioned.root()) { host in
            let events = EventLog(host)
            _ = try await host.navigate([.route("note", ["id": "1"])])
            let before = await host.snapshot()
            let upgrade = try await Self.upgradeToCrashingVersion(host, events)
            defer { upgrade.cancel() }
            // The new version serves now; asked for `extra` it crashes, within its probation.
            await #expect(throws: ResponseError.self) { try await host.navigate([.route("extra")]) }
            let result = try await upgrade.value
            #expect(result.outcome == .rolledBack && result.probation.state == .failed)
            #expect(result.reason?.contains("within its probation") == true, "\(result.reason ?? "")")
            let status = try #require(await host.status().first)
            #expect(status.version == "1.0.0" && status.state == .ready && status.upgrade?.phase == .rolledBack)
            // The tree is intact, the state is the old version's again, and the old version serves it.
            let after = await host.snapshot()
            #expect(after.instances.map(\.id) == before.instances.map(\.id))
            #expect(after.instances.first?.entries == before.instances.first?.entries)
            #expect(after.instances.first?.state == before.instances.first?.state)
            _ = try await host.navigate([.route("note", ["id": "2"])])
            let served = await host.snapshot()
            #expect(Versioned.version(of: served) == "1.0.0")
            #expect(served.instances.first?.state?["count"] == .int(3))
        }
    }

    @Test(
        "the old version brought back sees what upgrade-rollback.jsonl says: a state the new version changed comes through its own hook"
    )
    func rollbackAsTheOldVersionSeesIt() async throws {
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        let trace = try TracedSession.writer()
        options.trace = trace
        try await withHost([Versioned.entry()], root: Versioned.root(), options: options) { host in
            let events = EventLog(host)
            _ = try await host.navigate([.route("note", ["id": "1"])])
            let upgrade = try await Self.upgradeToCrashingVersion(host, events)
            defer { upgrade.cancel() }
            // Version 2.0.0 changes the state (its `total`), then crashes within its probation.
            _ = try await host.navigate([.route("note", ["id": "2"])])
            await #expect(throws: ResponseError.self) { try await host.navigate([.route("extra")]) }
            #expect(try await upgrade.value.outcome == .rolledBack)
            #expect(await host.snapshot().instances.first?.state == ["count": 3])
            _ = try await host.navigate([.route("note", ["id": "3"])])
            #expect(await host.snapshot().instances.first?.state == ["count": 4])
        }
        // Sessions: 1.0.0, 2.0.0, then 1.0.0 again.
        try TracedSession.expect(
            "upgrade-rollback.jsonl", matches: try TracedSession.session(trace, plugin: "notes", index: 2))
    }

    @Test("without rollback, a crash of the new version restarts it under its restart policy")
    func noRollbackRestartsTheNewVersion() async throws {
        try await withHost([Versioned.entry()], root: Versioned.root()) { host in
            let events = EventLog(host)
            let result = try await host.upgradePlugin(
                .init(
                    plugin: "notes", command: Versioned.command(["--version", "2.0.0", "--crash-on", "extra"]),
                    noRollback: true))
            #expect(result.outcome == .upgraded && result.probation.state == .off)
            await #expect(throws: ResponseError.self) { try await host.navigate([.route("extra")]) }
            try await events.waitUntilReady(host, "notes", restarts: 1)
            let status = try #require(await host.status().first)
            #expect(status.version == "2.0.0" && status.upgrade?.phase == .upgraded)
        }
    }

    @Test("requests that come while the instances move wait and go to the new version; the one in flight finishes")
    func heldRequestsGoToTheNewVersion() async throws {
        let folder = try TestSweep.temporaryDirectory()
        let fifo = folder + "/block"
        #expect(unsafe mkfifo(fifo, 0o600) == 0)
        let logs = LogCapture()
        try await withHost([Versioned.entry(["--block-on", fifo])], root: Versioned.root(), logs: logs) { host in
            let events = EventLog(host)
            let root = try #require(await host.snapshot().root)
            // In flight on the old version until the test lets it answer.
            let blocked = Task { try await host.navigate([.route("note", ["id": "block"]), .popLast]) }
            try await logs.waitFor("note 'block' waits for its FIFO")
            let upgrade = Task {
                try await host.upgradePlugin(
                    .init(
                        plugin: "notes", command: Versioned.command(["--version", "2.0.0", "--block-on", fifo]),
                        probationMs: 0))
            }
            try await events.wait(for: "the hold") { events in
                events.contains { if case .pluginChanged(let s) = $0 { s.upgrade?.phase == .holding } else { false } }
            }
            let held = (0..<3).map { index in
                Task { try await host.navigate(from: root, [.route("note", ["id": .string("held\(index)")])]) }
            }
            try await logs.waitFor("a request to plugin 'notes' waits", count: 3)
            try await Self.release(fifo)
            _ = try await blocked.value
            let result = try await upgrade.value
            for request in held { _ = try await request.value }
            #expect(result.held.requests == 3, "\(result.held)")
            // The request in flight was answered by the old version (its state counted it before the move); the held
            // ones by the new version.
            let entries = try #require(await host.snapshot().instances.first?.entries)
            let versions = entries.compactMap { entry -> String? in
                guard case .screen(let screen) = entry.content else { return nil }
                return screen.props?["version"]?.stringValue
            }
            #expect(versions == ["2.0.0", "2.0.0", "2.0.0"])
            #expect(await host.status().first?.version == "2.0.0")
        }
    }

    /// Lets the fixture's blocked route answer: one line into its FIFO.
    /// Starts the upgrade to version 2.0.0 (which renames the state field and crashes when asked for `extra`), on a
    /// probation longer than any test, and returns once it has switched: the task ends with the upgrade's answer.
    static func upgradeToCrashingVersion(
        _ host: HostHandle, _ events: EventLog
    ) async throws -> Task<PluginUpgradeRequest.Result, any Error> {
        let upgrade = Task {
            try await host.upgradePlugin(
                .init(
                    plugin: "notes",
                    command: Versioned.command(["--version", "2.0.0", "--rename-state", "--crash-on", "extra"]),
                    probationMs: 600_000, waitForProbation: true))
        }
        do {
            try await events.wait(for: "the switch") { events in
                events.contains { if case .pluginChanged(let s) = $0 { s.upgrade?.phase == .probation } else { false } }
            }
        } catch {
            upgrade.cancel()
            throw error
        }
        return upgrade
    }

    static func release(_ fifo: String) async throws {
        try await withDeadline(seconds: defaultTimeout, "the blocked route's FIFO") {
            let descriptor = unsafe open(fifo, O_WRONLY)
            guard descriptor >= 0 else { throw TestFailure("cannot open \(fifo)") }
            _ = unsafe write(descriptor, "go\n", 3)
            close(descriptor)
        }
    }
}
