import Glibc
import SwitchyardSystem
import SwitchyardTestSupport
import SwitchyardUV
import Testing

@Suite("libuv wrapper", .heavy, .timeLimit(.minutes(1)))
struct UVProcessTests {
    @Test("a one-shot timer fires once and the loop leaks nothing")
    func timerFires() async throws {
        let run = try await runOnLoop(Int.self) { loop, finish in
            let timer = try UVTimer(loop: loop)
            var count = 0
            try timer.start(after: 1) {
                count += 1
                timer.close()
                finish(.success(count))
            }
        }
        #expect(run.value == 1)
        #expect(run.leakedHandles == 0)
    }

    /// What `cat` echoed until it exited, and what the writer observed while writing.
    struct CatOutcome: Sendable, Equatable {
        var output: [UInt8] = []
        var status: TerminationStatus?
        var stdoutEOF = false
        var observed: [Int] = []
    }

    /// Runs `cat`; `write` feeds its stdin (and half-closes it) and returns what it observed on the way.
    func runCat(_ write: sending @escaping (UVPipe) throws -> [Int]) async throws -> LoopThreadRun<CatOutcome> {
        try await runOnLoop(CatOutcome.self) { loop, finish in
            var outcome = CatOutcome()
            func maybeFinish() {
                if outcome.status != nil && outcome.stdoutEOF { finish(.success(outcome)) }
            }
            let process = try UVProcess.spawn(
                loop: loop, options: UVSpawnOptions(executable: "/bin/cat", stderr: .ignore)
            ) { status in
                outcome.status = status
                maybeFinish()
            }
            try process.stdout?.startReading { event in
                switch event {
                case .data(let bytes): outcome.output += bytes
                case .eof, .error:
                    outcome.stdoutEOF = true
                    process.stdout?.close()
                    maybeFinish()
                }
            }
            outcome.observed = try write(try #require(process.stdin))
        }
    }

    @Test("cat echoes a line, sees EOF when stdin is half-closed, and exits 0")
    func catRoundTrip() async throws {
        let run = try await runCat { stdin in
            try stdin.write(Array("hello\n".utf8))
            try stdin.shutdown { _ in stdin.close() }
            return []
        }
        #expect(run.value.output == Array("hello\n".utf8))
        #expect(run.value.status == .exited(0))
        #expect(run.leakedHandles == 0)
    }

    @Test(
        "corked writes wait, count as queued, and leave in order at the outermost uncork; a half-close sends them first"
    )
    func corkedWrites() async throws {
        let run = try await runCat { stdin in
            stdin.cork()
            try stdin.write(Array("a\n".utf8))
            stdin.cork()
            try stdin.write(Array("b\n".utf8))
            stdin.uncork()
            let whileCorked = stdin.queuedBytes
            stdin.uncork()
            let afterUncork = stdin.queuedBytes
            stdin.cork()
            try stdin.write(Array("c\n".utf8))
            try stdin.shutdown { _ in stdin.close() }
            return [whileCorked, afterUncork]
        }
        #expect(run.value.observed == [4, 0])
        #expect(run.value.output == Array("a\nb\nc\n".utf8))
        #expect(run.value.status == .exited(0))
        #expect(run.leakedHandles == 0)
    }

    @Test("spawning a missing executable throws ENOENT at once and leaves no handle behind")
    func spawnMissing() async throws {
        let run = try await runOnLoop(Bool.self) { loop, finish in
            do {
                _ = try UVProcess.spawn(
                    loop: loop, options: UVSpawnOptions(executable: "/nonexistent/plugin")
                ) { _ in }
                finish(.failure(TestFailure("spawn unexpectedly succeeded")))
            } catch {
                finish(.success((error as? UVError)?.isNotFound ?? false))
            }
        }
        #expect(run.value)
        #expect(run.leakedHandles == 0)
    }

    @Test("a child inherits only descriptors 0, 1 and 2, even when the host holds an inheritable one")
    func onlyStdioInherited() async throws {
        // GIVEN an inheritable descriptor in the host
        // Opened under the spawn lock, as the lock's contract asks of code that creates inheritable descriptors:
        // otherwise it may land between another test's sweep and fork, and leak into *that* child.
        let leakedFD = SpawnLock.withLock { unsafe open("/dev/null", O_RDONLY) }
        defer { close(leakedFD) }
        #expect(leakedFD > 2)
        let run = try await runOnLoop([Int32].self) { loop, finish in
            let process = try UVProcess.spawn(loop: loop, options: UVSpawnOptions(executable: "/bin/cat")) { _ in }
            // WHEN we look at the child's descriptor table once it runs its own code: a line echoed back proves
            // the dynamic loader is done (right after exec it briefly holds the libraries it maps as fd 3).
            var looked = false
            try process.stdout?.startReading { event in
                guard case .data = event, !looked else { return }
                looked = true
                let descriptors = SystemProcess.openDescriptors(of: process.pid)
                process.stdin?.close()
                process.stdout?.close()
                process.stderr?.close()
                process.onClose = { finish(.success(descriptors)) }
                process.close()
            }
            try process.stdin?.write(Array("ready\n".utf8))
        }
        // THEN it holds exactly stdio
        #expect(run.value == [0, 1, 2])
        #expect(run.leakedHandles == 0)
    }

    @Test("writing to a child that exited is an EPIPE error, not a SIGPIPE that kills the host")
    func epipeIsAnError() async throws {
        let run = try await runOnLoop(Bool.self) { loop, finish in
            let process = try UVProcess.spawn(
                loop: loop, options: UVSpawnOptions(executable: "/bin/true", stdout: .ignore, stderr: .ignore)
            ) { _ in }
            process.onClose = {
                var sawError = false
                let big = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
                process.stdin?.onWriteError = { _ in sawError = true }
                do {
                    try process.stdin?.write(big)
                } catch {
                    sawError = (error as? UVError)?.isBrokenPipe ?? false
                }
                let timer = try? UVTimer(loop: loop)
                try? timer?.start(after: 20) {
                    timer?.close()
                    process.stdin?.close()
                    finish(.success(sawError))
                }
            }
        }
        #expect(run.value)
        #expect(run.leakedHandles == 0)
    }

    @Test("SIGTERM is observed as a signal termination")
    func killObserved() async throws {
        let run = try await runOnLoop(TerminationStatus.self) { loop, finish in
            let process = try UVProcess.spawn(
                loop: loop, options: UVSpawnOptions(executable: "/bin/sleep", arguments: ["30"], stdin: .ignore)
            ) { status in
                finish(.success(status))
            }
            process.stdout?.close()
            process.stderr?.close()
            try process.killGroup(SIGTERM)
        }
        #expect(run.value == .signaled(SIGTERM))
        #expect(run.leakedHandles == 0)
    }

    @Test("a child flooding stdout cannot stall the loop: timers keep firing while it writes")
    func floodDoesNotStall() async throws {
        let run = try await runOnLoop((Int, Int).self) { loop, finish in
            var bytes = 0
            var ticks = 0
            let process = try UVProcess.spawn(
                loop: loop, options: UVSpawnOptions(executable: "/usr/bin/yes", stdin: .ignore, stderr: .ignore)
            ) { _ in }
            try process.stdout?.startReading { event in
                if case .data(let chunk) = event { bytes += chunk.count }
            }
            let timer = try UVTimer(loop: loop)
            try timer.start(after: 5, repeatEvery: 5) {
                // Counted once the flood has begun (on a loaded machine `yes` may not have run yet): ticks while it
                // writes are what the test is about, not how soon it starts.
                guard bytes > 0 else { return }
                ticks += 1
                if ticks == 10 {
                    timer.close()
                    process.stdout?.close()
                    process.onClose = { finish(.success((bytes, ticks))) }
                    process.close()
                }
            }
        }
        #expect(run.value.0 > 0)
        #expect(run.value.1 == 10)
        #expect(run.leakedHandles == 0)
    }

    @Test("remote.execute runs a job on the loop thread from another thread")
    func remoteExecute() async throws {
        let run = try await runOnLoop(Bool.self) { loop, finish in
            let keepAlive = try UVTimer(loop: loop)
            try keepAlive.start(after: 60_000) {}
            let remote = loop.remote
            let box = UncheckedBox({
                keepAlive.close()
                finish(.success(loop.inLoopThread))
            })
            _ = try SystemThread.spawn {
                remote.execute { box.value() }
            }
        }
        #expect(run.value)
        #expect(run.leakedHandles == 0)
    }

    @Test(
        "remote.execute from the loop's own thread runs the job in the same iteration, after its poll, without blocking"
    )
    func remoteExecuteFromLoopThread() throws {
        let loop = try UVLoop()
        // A timer far away keeps the loop alive: a poll that waited for the wake-up would block on it for a minute.
        let keepAlive = try UVTimer(loop: loop)
        try keepAlive.start(after: 60_000) {}
        let now = try UVTimer(loop: loop)
        final class Count: @unchecked Sendable { var value = 0 }  // touched on this thread only
        let ran = Count()
        try now.start(after: 0) {
            loop.remote.execute { ran.value += 1 }
        }
        // Iteration 1: the timer queues the job from the loop's thread; the same iteration's check phase runs it.
        loop.runOnce()
        #expect(ran.value == 1)
        keepAlive.close()
        now.close()
        loop.run()  // the close callbacks; nothing is left to keep it running
        #expect(loop.close() == 0)
    }

    @Test("a Unix socket server sees the connecting peer's uid, and the socket can be made 0600")
    func unixSocketPeerCredentials() async throws {
        let path = "/tmp/switchyard-uvtest-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        defer { FileSystem.remove(path) }
        let run = try await runOnLoop((UInt32?, Int32?, UInt32?).self) { loop, finish in
            let server = try UVPipe(loop: loop)
            try server.bind(path: path)
            try FileSystem.setPermissions(path, 0o600)
            let mode = FileSystem.permissions(path)
            try server.listen { _ in
                guard let connection = try? server.accept() else { return }
                let credentials = try? connection.peerCredentials()
                connection.close()
                server.close()
                finish(.success((credentials?.uid, credentials?.pid, mode)))
            }
            let client = try UVPipe(loop: loop)
            try client.connect(path: path) { _ in client.close() }
        }
        #expect(run.value.0 == getuid())
        #expect(run.value.1 == getpid())
        #expect(run.value.2 == 0o600)
        #expect(run.leakedHandles == 0)
    }
}
