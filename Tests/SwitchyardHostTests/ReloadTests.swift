import Glibc
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// `host/reload` (Protocol/README.md §20.2): the manifest read again, what changed applied, synchronously; a manifest
/// or a change that does not hold refused whole. Real host, real plugin processes, a manifest file rewritten between
/// reloads.
@Suite("Manifest reload", .heavy, .timeLimit(.minutes(1)))
struct ReloadTests {
    /// A manifest whose root is the `notes` plugin, with these entries (JSON objects).
    static func manifest(_ entries: [String]) -> String {
        #"{"app": "reload", "root": {"plugin": "notes", "type": "notes"}, "plugins": [\#(entries.joined(separator: ", "))]}"#
    }

    /// A versioned plugin's entry (Tests/Fixtures/plugins/versioned.py), `more` JSON members appended.
    static func entry(_ name: String, _ arguments: [String] = [], _ more: String = "") -> String {
        let command = Versioned.command(arguments).map { #""\#($0)""# }.joined(separator: ", ")
        return #"{"name": "\#(name)", "command": [\#(command)]\#(more.isEmpty ? "" : ", " + more)}"#
    }

    /// Writes `text` to the manifest file, as an editor would between reloads.
    static func write(_ text: String, to path: String) throws {
        try FileSystem.writeFileAtomically(path, Array(text.utf8), mode: 0o600)
    }

    /// Runs `body` against a host started from the manifest file `text`.
    static func withReloadableHost(
        _ text: String, _ body: @Sendable (HostHandle, _ path: String) async throws -> Void
    ) async throws {
        let path = try temporaryManifest(text)
        let manifest = try Manifest.load(path: path)
        try await withHost(manifest: manifest) { host in try await body(host, path) }
    }

    @Test("a manifest with any error is refused whole, with the file:line:column messages run gives; nothing changes")
    func brokenManifest() async throws {
        try await Self.withReloadableHost(Self.manifest([Self.entry("notes")])) { host, path in
            let before = await host.status()
            let tree = await host.snapshot()
            try Self.write(
                Self.manifest([Self.entry("notes", ["--version", "2.0.0"]), #"{"name": "more", "comand": ["x"]}"#]),
                to: path)
            do throws(ResponseError) {
                _ = try await host.reload()
                Issue.record("the reload succeeded")
            } catch {
                #expect(error.code == .invalidParams && error.data?["field"] == "manifest")
                let diagnostics = error.data?["diagnostics"]?.arrayValue?.compactMap(\.stringValue) ?? []
                #expect(diagnostics.contains { $0.hasPrefix("\(path):1:") && $0.contains("unknown key 'comand'") })
                #expect(error.message.contains("nothing changed"))
            }
            #expect(await host.status() == before)
            #expect(await host.snapshot() == tree)
        }
    }

    @Test("added plugins start and join, changed ones are upgraded, in one reload judged as a whole")
    func addsAndUpgrades() async throws {
        try await Self.withReloadableHost(Self.manifest([Self.entry("notes")])) { host, path in
            _ = try await host.navigate([.route("note", ["id": "1"])])
            let pid = await host.status().first?.pid
            // notes 2.0.0's `extra` opens the new plugin `other`: only the two changes together compose.
            try Self.write(
                Self.manifest([
                    Self.entry("notes", ["--version", "2.0.0", "--opens", "other"]),
                    Self.entry("other", ["--version", "0.1.0"]),
                ]), to: path)
            let result = try await host.reload()
            #expect(result.added.map(\.name) == ["other"] && result.added.first?.state == "ready")
            #expect(result.upgraded.map(\.to.version) == ["2.0.0"] && result.upgraded.first?.from.pid == pid)
            #expect(result.removed.isEmpty && result.failed.isEmpty && result.unchanged.isEmpty)
            let landed = try await host.navigate([.route("extra")])
            let opened = try #require(await host.snapshot().instance(landed.instance))
            #expect(opened.plugin == "other")
            #expect(await host.snapshot().instances.first?.state?["count"] == .int(3))
        }
    }

    @Test("a removed plugin with instances in the tree is refused, naming them, unless --force dismisses them first")
    func removesWithForce() async throws {
        let start = Self.manifest([Self.entry("notes", ["--opens", "other"]), Self.entry("other")])
        try await Self.withReloadableHost(start) { host, path in
            let landed = try await host.navigate([.route("extra")])
            let otherPID = try #require(await host.status().first { $0.name == "other" }?.pid)
            let tree = await host.snapshot()
            // `other` goes, and notes 2.0.0 no longer opens it.
            try Self.write(Self.manifest([Self.entry("notes", ["--version", "2.0.0"])]), to: path)
            do throws(ResponseError) {
                _ = try await host.reload()
                Issue.record("the reload succeeded")
            } catch {
                #expect(error.code == .notAllowed && error.message.contains("other.notes\(landed.instance)"))
                #expect(error.data?["flag"] == "--force")
            }
            #expect(await host.snapshot() == tree)
            let result = try await host.reload(force: true)
            #expect(result.dismissed == [landed.instance] && result.removed == ["other"])
            #expect(result.upgraded.map(\.to.version) == ["2.0.0"])
            #expect(await host.snapshot().instance(landed.instance) == nil)
            #expect(await host.status().map(\.name) == ["notes"])
            #expect(SystemProcess.waitForExit(otherPID, milliseconds: 5_000), "the removed plugin stops")
        }
    }

    @Test("a change the app would not compose with is refused whole: the new processes stop, nothing changes")
    func refusesWhatDoesNotCompose() async throws {
        let start = Self.manifest([Self.entry("notes", ["--opens", "other"]), Self.entry("other")])
        try await Self.withReloadableHost(start) { host, path in
            let before = await host.status()
            // notes still opens `other`, which the new manifest no longer names.
            try Self.write(Self.manifest([Self.entry("notes", ["--version", "2.0.0", "--opens", "other"])]), to: path)
            do throws(ResponseError) {
                _ = try await host.reload()
                Issue.record("the reload succeeded")
            } catch {
                #expect(
                    error.code == .compositionError && error.message.contains("nothing changed"), "\(error.message)")
                #expect(error.message.contains("'other'"), "\(error.message)")
            }
            #expect(await host.status().map(\.pid) == before.map(\.pid))
            #expect(await host.status().map(\.version) == ["1.0.0", "1.0.0"])
        }
    }

    @Test("what the running process keeps (hibernation, restart policy) is applied without a new process")
    func reconfiguresInPlace() async throws {
        try await Self.withReloadableHost(Self.manifest([Self.entry("notes")])) { host, path in
            let pid = await host.status().first?.pid
            try Self.write(
                Self.manifest([
                    Self.entry("notes", [], #""hibernateAfterMs": 60000, "restart": {"policy": "transient"}"#)
                ]),
                to: path)
            let result = try await host.reload()
            #expect(result.reconfigured == ["notes"] && result.upgraded.isEmpty)
            #expect(await host.status().first?.pid == pid)
            let same = try await host.reload()
            #expect(same.unchanged == ["notes"] && same.reconfigured.isEmpty)
        }
    }

    @Test("switchyard reload and SIGHUP reload a running `switchyard run`")
    func cliAndSignal() async throws {
        let path = try temporaryManifest(Self.manifest([Self.entry("notes")]))
        let socket = FileSystem.parentDirectory(of: path) + "/control.sock"
        let host = try CLIProcess(["run", "--manifest", path, "--socket", socket])
        defer { host.signal(SIGTERM) }
        try await host.waitForStderr("switchyard: ready")
        try Self.write(Self.manifest([Self.entry("notes", ["--version", "2.0.0"])]), to: path)
        let reload = try CLIProcess(["reload", "--socket", socket])
        #expect(try await reload.waitForExit() == 0, "\(reload.stderr)")
        #expect(reload.stdout.contains { $0.contains("upgraded: notes 1.0.0 → 2.0.0") }, "\(reload.stdout)")
        try Self.write(Self.manifest([Self.entry("notes", ["--version", "3.0.0"])]), to: path)
        host.signal(SIGHUP)
        try await host.waitForStderr("plugin 'notes' upgraded 2.0.0 → 3.0.0")
        let status = try CLIProcess(["status", "--socket", socket])
        #expect(try await status.waitForExit() == 0)
        #expect(status.stdout.contains { $0.hasPrefix("notes  ready") && $0.contains("v3.0.0") }, "\(status.stdout)")
        host.signal(SIGTERM)
        #expect(try await host.waitForExit() == 0)
    }
}
