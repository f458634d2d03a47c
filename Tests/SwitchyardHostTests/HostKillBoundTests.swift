import Glibc
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// A host killed while changes are in flight (issue 26's host kill, spec §17): the state file it leaves is a tree it
/// published, exactly, and no older than the newest revision the host had said was on disk. Exact checks, no clock:
/// what the host published comes from a watcher, what it had written from `host/status`.
@Suite("A host killed under load", .heavy, .timeLimit(.minutes(2)))
struct HostKillBoundTests {
    @Test(
        "a host SIGKILLed with changes in flight leaves a tree it published, no older than what it said was written, and the next host restores it"
    )
    func killedUnderLoad() async throws {
        let (host, socket, path) = try StateFileDiskFullTests.startHost()
        defer { host.signal(SIGKILL) }
        try await host.waitForStderr("switchyard: ready")
        let watcher = try CLIProcess(["watch", "--json", "--socket", socket])
        defer { watcher.signal(SIGKILL) }
        _ = try await watcher.stdoutLine(0)  // subscribed: every revision from here on is seen

        try await Self.nav(socket, ["@root", "setRoot", "authenticated", #"{"user":"alice"}"#])
        for round in 0..<12 { try await Self.nav(socket, Self.step(round)) }
        // The newest revision the host says is on disk: the file may be newer at the kill, never older.
        let status = try await StateFileDiskFullTests.status(socket)
        let written = try #require(status.stateFile?.writtenRevision)
        #expect(status.stateFile?.failures == 0)

        // A burst of changes in flight, and the kill among them.
        let burst = try (12..<20).map { round in
            try CLIProcess(["nav", "--socket", socket] + Self.step(round))
        }
        host.signal(SIGKILL)
        #expect(try await host.waitForExit() == 128 + SIGKILL)
        for process in burst { _ = try await process.waitForExit() }
        _ = try await watcher.waitForExit()

        let published = try Self.published(watcher.stdout)
        let left = try StateFileTests.readTree(path)
        #expect(left.revision >= written, "the file holds revision \(left.revision), the host had written \(written)")
        #expect(published[left.revision] == left, "revision \(left.revision) is not one the host published as such")

        // The next host restores exactly that tree.
        let next = try CLIProcess(["run", "--script", "-", "--state", path, "--no-socket", "--json"])
        next.closeStdin()
        #expect(try await next.waitForExit() == 0)
        let restored = try JSONValueDecoder().decode(
            TreeSnapshot.self, from: JSONParser.parse(Array(try #require(next.stdout.last).utf8)))
        #expect(restored == left)
    }

    /// A push of a todo, then its pop: each one revision.
    static func step(_ round: Int) -> [String] {
        round % 2 == 0
            ? ["todos.todos", "route", "todo", #"{"id":"\#(round % 4 == 0 ? "1" : "7")"}"#]
            : ["todos.todos", "popLast"]
    }

    static func nav(_ socket: String, _ words: [String]) async throws {
        try await StateFileDiskFullTests.run(["nav", "--socket", socket] + words)
    }

    /// Every tree the host published to the watcher, by revision: the one it subscribed to (its first line, a
    /// snapshot) and each it changed to (its `tree/changed` lines). The first counts: under load (busy CPUs, other
    /// processes' fsyncs) the writer may not have finished a write since, and the file then still holds it.
    static func published(_ lines: [String]) throws -> [UInt64: TreeSnapshot] {
        var trees: [UInt64: TreeSnapshot] = [:]
        for (index, line) in lines.enumerated() where line.hasPrefix("{") {
            let value = try JSONParser.parse(Array(line.utf8))
            let snapshot: JSONValue
            if value["method"] == .string(TreeChangedNotification.method), let changed = value["params"]?["snapshot"] {
                snapshot = changed
            } else if index == 0 {
                snapshot = value
            } else {
                continue
            }
            let tree = try JSONValueDecoder().decode(TreeSnapshot.self, from: snapshot)
            trees[tree.revision] = tree
        }
        return trees
    }
}
