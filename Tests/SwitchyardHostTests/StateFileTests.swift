import Foundation
import SwitchyardHost
import SwitchyardHostTestSupport
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardTestSupport
import SwitchyardUV
import Testing

/// `--state FILE`: the tree survives the host, atomically.
@Suite("State file", .heavy, .timeLimit(.minutes(2)))
struct StateFileTests {
    static func temporaryPath() throws -> String {
        try TestSweep.temporaryDirectory() + "/tree.json"
    }

    static func options(_ path: String) -> HostOptions {
        var options = HostOptions(productsDirectory: productsDirectory, shutdownGraceMs: 500)
        options.stateFile = path
        return options
    }

    static func readTree(_ path: String) throws -> TreeSnapshot {
        let value = try JSONParser.parse(try FileSystem.readFile(path))
        #expect(value["format"] == "switchyard-state")
        return try JSONValueDecoder().decode(TreeSnapshot.self, from: try #require(value["tree"]))
    }

    @Test("the tree is written after changes and restored at the next start, every instance re-created in its plugin")
    func roundTrip() async throws {
        let path = try Self.temporaryPath()
        let saved = try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: Self.options(path)) { host in
            _ = try await host.navigate([.setRoot("authenticated", ["user": "alice"])])
            _ = try await host.open("switchyard://todos/todo/42")
            let todos = try #require(await host.snapshot().find("todos", "todos"))
            _ = try await host.navigate(from: todos.id, [.route("share", ["id": "42"])])
            _ = try await host.open("switchyard://profile/settings")
            return await host.snapshot()
        }
        #expect(try Self.readTree(path) == saved)

        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: Self.options(path), logs: logs) { host in
            let restored = await host.snapshot()
            #expect(restored == saved)
            #expect(logs.contains("tree restored from the state file: \(saved.instances.count) instances, revision \(saved.revision)"))
            // The plugins know their restored instances: the share flow (Swift, with state) goes on.
            let share = try #require(restored.find("todos", "share"))
            #expect(share.state == ["todo": "42"])
            let landed = try await host.navigate(from: share.id, [.route("pickProject", ["id": "p2"])])
            #expect(await host.snapshot().instance(landed.instance)?.plugin == "projects")
            // Python and Node plugins too.
            _ = try await host.navigate(from: try #require(restored.find("profile", "profile")).id, [.popLast])
            // Ids continue after the saved ones.
            #expect(landed.instance.rawValue > (saved.instances.map(\.id.rawValue).max() ?? 0))
        }
    }

    @Test("a corrupt or torn state file is reported and set aside; the app starts fresh", arguments: [
        "this is not json", #"{"format":"switchyard-state","version":1,"nextInstanceID":3,"nextEntryID":"#,
        #"{"format":"something-else","version":1}"#,
        #"{"format":"switchyard-state","version":1,"nextInstanceID":9,"nextEntryID":9,"tree":{"revision":4,"root":1,"instances":[{"id":1,"plugin":"main","type":"main","kind":"stack","status":"ok","root":{"entry":1,"route":"x","transition":"root","content":{"coordinator":7}}}]}}"#,
    ])
    func corrupt(_ content: String) async throws {
        let path = try Self.temporaryPath()
        try SpawnLock.withLock { try content.write(toFile: path, atomically: false, encoding: .utf8) }
        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: Self.options(path), logs: logs) { host in
            let tree = await host.snapshot()
            #expect(tree.revision == 1)
            #expect(tree.find("unauthenticated", "unauthenticated") != nil)
            #expect(logs.contains("the state file \(path) cannot be used"))
            let directory = FileSystem.parentDirectory(of: path)
            let aside = FileSystem.listDirectory(directory).filter { $0.hasPrefix("tree.json.corrupt-") }
            #expect(aside.count == 1)
            let kept = String(decoding: try FileSystem.readFile("\(directory)/\(aside[0])"), as: UTF8.self)
            #expect(kept == content)
        }
        // The fresh tree was written in its place.
        #expect(try Self.readTree(path).revision == 1)
    }

    @Test("a state file of another app's shape (its root is not the manifest's) is set aside, not forced on this app")
    func incompatible() async throws {
        let path = try Self.temporaryPath()
        _ = try await withHost([TestPlugins.misbehave("lab", [])], root: CoordinatorReference(plugin: "lab", type: "lab"), options: Self.options(path)) { host in
            await host.snapshot()
        }
        let logs = LogCapture()
        try await withHost(TestPlugins.demo(), root: TestPlugins.demoRoot, options: Self.options(path), logs: logs) { host in
            #expect(await host.snapshot().find("main", "main") != nil)
            #expect(logs.contains("its root is lab.lab"))
        }
    }

    @Test("a host SIGKILLed during a burst of changes leaves the old tree or a new one, never a torn file, and it restores")
    func killedMidWrite() async throws {
        let path = try Self.temporaryPath()
        // A burst: hundreds of chains, each a new revision, each scheduling a write.
        var script = "nav @root setRoot authenticated {\"user\":\"alice\"}\n"
        for round in 0..<400 {
            script += round % 2 == 0 ? "nav todos.todos route todo {\"id\":\"\(round % 4 == 0 ? "1" : "7")\"}\n" : "nav todos.todos popLast\n"
        }
        // A first run to the end: the file holds a tree before any kill.
        let complete = try CLIProcess(["run", "--script", "-", "--state", path, "--no-socket"])
        complete.send(script)
        complete.closeStdin()
        #expect(try await complete.waitForExit() == 0)
        var revisions = [try Self.readTree(path).revision]
        for attempt in 0..<4 {
            let cli = try CLIProcess(["run", "--script", "-", "--state", path, "--no-socket"])
            cli.send(script)
            cli.closeStdin()
            try await cli.waitForStderr("switchyard: ready")
            // The kill lands somewhere in the burst: a different moment each time (the randomness of the experiment,
            // not a wait for anything).
            try await Task.sleep(for: .milliseconds(20 + 40 * attempt))
            cli.signal(SIGKILL)
            _ = try await cli.waitForExit()
            let tree = try Self.readTree(path)
            _ = try NavigationTree(snapshot: tree)
            revisions.append(tree.revision)
        }
        #expect(revisions.allSatisfy { $0 >= 1 })
        #expect(revisions.first == 402)
        // The next host (same app) restores the last tree written, and cleans up what a kill left half-written.
        let last = try Self.readTree(path)
        let next = try CLIProcess(["run", "--script", "-", "--state", path, "--no-socket", "--json"])
        next.closeStdin()
        #expect(try await next.waitForExit() == 0)
        let restored = try JSONValueDecoder().decode(TreeSnapshot.self, from: JSONParser.parse(try #require(next.stdout.last)))
        #expect(restored == last)
        let leftovers = FileSystem.listDirectory(FileSystem.parentDirectory(of: path)).filter { $0.contains(".tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}
