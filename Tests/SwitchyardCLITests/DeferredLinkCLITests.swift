import Glibc
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// Deferred deep links (§13.5) from the `switchyard` executable: the demo's scenario script, and a manifest whose
/// `deepLinks` default makes `switchyard open` defer, with `--pending` and `--cancel`.
@Suite("Deferred deep links from the CLI", .heavy, .timeLimit(.minutes(2)))
struct DeferredLinkCLITests {
    @Test("run --script replays the demo's deferred-links scenario: waits, replacement, cancel, timeout, sign-in, tab")
    func scenario() async throws {
        let result = try await CLITests.run([
            "run", "--script", "Plugins/demo/scenarios/deferred-links.txt", "--json", "--no-socket",
        ])
        #expect(result.status == 0, "stderr:\n\(result.stderr.joined(separator: "\n"))")
        #expect(result.stderr.contains("ok: wait link -"))
        #expect(result.stderr.contains("ok: expect revision 5"), "the link lands in the revision after the sign-in")
        #expect(result.stderr.contains("ok: wait tab inbox"))
        let tree = try CLITests.lastJSONLine(result.stdout)
        #expect(tree.revision == 10)
        #expect(tree.instances.first { $0.type == "todos" }?.entries?.map(\.params) == [["id": "42"]])
    }

    @Test("a manifest's deepLinks.defer makes open defer; open --pending shows the link, open --cancel drops it")
    func manifestDefault() async throws {
        let directory = try TestSweep.temporaryDirectory()
        let manifest = """
            {"extends": "\(packageRoot)/Plugins/demo/switchyard.json", "app": "deferred",
             "deepLinks": {"defer": true, "deferMs": 60000}}
            """
        try FileSystem.writeFileAtomically(directory + "/switchyard.json", Array(manifest.utf8), mode: 0o600)
        let socket = directory + "/deferred.sock"
        let host = try CLIProcess(["run", "--manifest", directory + "/switchyard.json", "--socket", socket])
        do {
            try await host.waitForStderr("switchyard: ready (6/6 plugins")
            let waiting =
                "switchyard://todos/todo/42 waits until root 'authenticated' of #1 is active (at most 60 s, link 1)"
            let opened = try await CLITests.run(["open", "--socket", socket, "switchyard://todos/todo/42"])
            #expect(opened.status == 0 && opened.stdout == [waiting], "\(opened.stderr)")
            #expect(try await CLITests.run(["open", "--socket", socket, "--pending"]).stdout == [waiting])
            #expect(
                try await CLITests.run(["open", "--socket", socket, "--cancel"]).stdout == ["cancelled: " + waiting])
            #expect(try await CLITests.run(["open", "--socket", socket, "--pending"]).stdout == ["no deep link waits"])
            let refused = try await CLITests.run(["open", "--socket", socket, "--pending", "switchyard://about"])
            #expect(refused.status != 0)
        } catch {
            host.signal(SIGKILL)
            _ = try? await host.waitForExit()
            throw error
        }
        host.signal(SIGTERM)
        #expect(try await host.waitForExit() == 0, "\(host.stderr.suffix(20))")
    }
}
