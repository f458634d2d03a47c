import Glibc
import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardTestSupport
import Testing

/// A full disk under the state file (issue 26's fault, spec §17): the app goes on serving and says so, and the file
/// is written again once there is room. The disk is made "full" for the host process alone with a file-size limit
/// (`prlimit --fsize`) set on the running host, as the chaos experiments do where no small tmpfs can be mounted: a
/// write then fails with EFBIG, as it would with ENOSPC, and nothing else on the machine is touched.
@Suite("State file on a full disk", .heavy, .timeLimit(.minutes(2)))
struct StateFileDiskFullTests {
    @Test("the state file cannot be written: the app serves and says so; once there is room it is written again")
    func diskFull() async throws {
        let (host, socket, path) = try StateFileDiskFullTests.startHost()
        defer { host.signal(SIGKILL) }
        try await host.waitForStderr("switchyard: ready")
        let first = try await Self.status(socket)
        let started = try #require(first.stateFile)
        #expect(started.path == path && started.failures == 0 && started.error == nil)

        // The disk is full: no file of the host's may grow past 64 bytes (a tree is a few KB).
        try await Self.prlimit(host.pid, fileSize: "64:unlimited")
        try await Self.run(["nav", "--socket", socket, "@root", "setRoot", "authenticated", #"{"user":"alice"}"#])
        let logged = try await host.waitForStderr("cannot write the state file \(path)")
        #expect(logged.contains("the app goes on serving"), "\(logged)")
        let full = try #require(try await Self.status(socket).stateFile)
        #expect(full.failures >= 1 && full.error?.contains("EFBIG") == true, "\(full)")
        // What the host says is on disk is what is on disk: the tree from before the limit (or none, when the limit
        // came before the first write), never the new root.
        let kept = FileSystem.exists(path) ? try StateFileTests.readTree(path).revision : nil
        #expect(full.writtenRevision == kept && (kept ?? 0) <= first.revision, "\(full), on disk \(kept ?? 0)")
        // It serves: a deep link lands, and the tree says so.
        try await Self.run(["open", "--socket", socket, "switchyard://todos/todo/42"])
        let render = try await runSwitchyard(["status", "--socket", socket])
        #expect(render.stdout.contains { $0.hasPrefix("state  \(path): NOT WRITTEN") }, "\(render.stdout)")

        // Room again: the next change is written, and the host says that too.
        try await Self.prlimit(host.pid, fileSize: "unlimited:unlimited")
        try await Self.run(["nav", "--socket", socket, "todos.todos", "popLast"])
        _ = try await host.waitForStderr("the state file \(path) is written again")
        let healed = try await Self.status(socket)
        let state = try #require(healed.stateFile)
        #expect(state.failures == 0 && state.error == nil, "\(state)")
        let onDisk = try StateFileTests.readTree(path)
        #expect(state.writtenRevision == onDisk.revision && onDisk.revision >= 3)
        host.signal(SIGTERM)
        #expect(try await host.waitForExit() == 0)
    }

    /// `switchyard run` of the demo app with a control socket and a state file in a fresh folder (the caller waits
    /// for it to be ready, and kills it).
    static func startHost() throws -> (host: CLIProcess, socket: String, path: String) {
        let directory = try TestSweep.temporaryDirectory()
        let (socket, path) = (directory + "/host.sock", directory + "/tree.json")
        return (try CLIProcess(["run", "--socket", socket, "--state", path]), socket, path)
    }

    static func run(_ arguments: [String]) async throws {
        let run = try await runSwitchyard(arguments)
        #expect(run.status == 0, "switchyard \(arguments.joined(separator: " ")): \(run.errorText)")
    }

    static func status(_ socket: String) async throws -> HostStatusRequest.Result {
        let run = try await runSwitchyard(["status", "--json", "--socket", socket])
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.stdout.last)
        return try JSONValueDecoder().decode(
            HostStatusRequest.Result.self, from: try JSONParser.parse(Array(line.utf8)))
    }

    /// Sets the running host's file-size limit (`SOFT:HARD`) with util-linux's `prlimit` (prlimit(2)). Only the soft
    /// limit moves: raising a hard limit again needs CAP_SYS_RESOURCE, which a container's root may not have.
    static func prlimit(_ pid: Int32, fileSize: String) async throws {
        let run = try await runSwitchyard(
            ["--pid", "\(pid)", "--fsize=\(fileSize)"], executable: "/usr/bin/prlimit")
        #expect(run.status == 0, "prlimit: \(run.stderr)")
    }
}
