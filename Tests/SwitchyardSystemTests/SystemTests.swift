import Glibc
import SwitchyardSystem
import SwitchyardTestSupport
import Synchronization
import Testing

@Suite("The syscall layer: errors, descriptors, sockets, threads", .timeLimit(.minutes(1)))
struct SystemTests {
    @Test("a failed syscall is a typed error naming the operation, worded as libuv words it")
    func errors() throws {
        let missing = try TestSweep.temporaryDirectory() + "/missing"
        #expect(throws: SystemError(errno: ENOENT, operation: "create a file in \(missing)")) {
            try FileSystem.checkReplaceable(missing + "/file")
        }
        let error = SystemError(errno: ENOENT, operation: "open /nowhere")
        #expect(error.description == "open /nowhere: ENOENT (no such file or directory)")
        #expect(error.isNotFound && !error.isResourceExhaustion)
        #expect(SystemError(errno: EMFILE, operation: "accept4").isResourceExhaustion)
        #expect(SystemError(errno: 4_000, operation: "x").description == "x: UNKNOWN (unknown error 4000)")
    }

    @Test("Bytes.firstIndex finds what Array.firstIndex finds, in every window of a buffer")
    func newlineSearch() {
        var generator = SystemRandomNumberGenerator()
        let buffer = (0..<300).map { _ in UInt8.random(in: 0...12, using: &generator) }
        for from in stride(from: 0, to: buffer.count, by: 7) {
            for to in stride(from: from, through: buffer.count, by: 11) {
                #expect(
                    Bytes.firstIndex(of: 0x0A, in: buffer, from: from, to: to) == buffer[from..<to].firstIndex(of: 0x0A)
                )
            }
        }
        #expect(Bytes.firstIndex(of: 0x0A, in: buffer, from: 5, to: 400) == nil)
        #expect(Bytes.firstIndex(of: 0x0A, in: [], from: 0, to: 0) == nil)
    }

    @Test("a pipe's bytes come out as they went in, at an offset, then end of file")
    func descriptors() throws {
        let (readEnd, writeEnd) = try Descriptor.pipe()
        defer { Descriptor.close(readEnd) }
        try Descriptor.writeAll(writeEnd, Array("hello".utf8))
        Descriptor.close(writeEnd)
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try Descriptor.read(readEnd, into: &buffer, at: 3) == 5)
        #expect(Array(buffer[3..<8]) == Array("hello".utf8))
        #expect(try Descriptor.read(readEnd, into: &buffer, at: 0) == 0)
        #expect(throws: SystemError(errno: EINVAL, operation: "read")) {
            try Descriptor.read(readEnd, into: &buffer, at: 8)
        }
    }

    @Test("a socket path too long for sun_path is refused with ENAMETOOLONG, not cut; no listener is ENOENT")
    func socketPaths() throws {
        let long = "/tmp/" + String(repeating: "x", count: 120)
        #expect(throws: SystemError(errno: ENAMETOOLONG, operation: "connect \(long)")) {
            try UnixSocket(connectingTo: long)
        }
        let missing = try TestSweep.temporaryDirectory() + "/none.sock"
        #expect(throws: SystemError(errno: ENOENT, operation: "connect \(missing)")) {
            try UnixSocket(connectingTo: missing)
        }
        #expect(!UnixSocket.isListening(missing))
    }

    @Test("a listening socket accepts a client of this user; the wake pipe ends a wait; close is once")
    func listenAndConnect() throws {
        let path = try TestSweep.temporaryDirectory() + "/s.sock"
        let listener = try UnixSocket.listen(at: path, mode: 0o600, backlog: 4)
        defer { Descriptor.close(listener) }
        #expect(try UnixSocket.accept(listener) == nil)
        let client = try UnixSocket(connectingTo: path)
        let server = try #require(try UnixSocket.accept(listener))
        defer { Descriptor.close(server) }
        #expect(try UnixSocket.peerCredentials(server, "peer").uid == getuid())
        #expect(UnixSocket.listener(at: path)?.pid == getpid())

        let wake = try WakePipe()
        wake.poke()
        let woken = try client.waitReadable(waking: wake, timeoutMilliseconds: 60_000)
        #expect(woken.woken && !woken.readable)
        wake.drain()
        #expect(try client.waitReadable(waking: wake, timeoutMilliseconds: 0) == (false, false))
        #expect(throws: SystemError(errno: ETIMEDOUT, operation: "read")) { try client.read(timeoutMilliseconds: 0) }

        try Descriptor.writeAll(server, Array("answer".utf8))
        #expect(try client.read(timeoutMilliseconds: 60_000) == Array("answer".utf8))
        client.close()
        client.close()
        #expect(client.descriptor == -1)
        #expect(throws: SystemError(errno: EBADF, operation: "send")) { try client.write([1]) }
    }

    @Test("a thread runs the closure it was sent, and join waits for it")
    func threads() throws {
        final class Seen: Sendable { let value = Mutex(0) }
        let seen = Seen()
        let thread = try SystemThread.spawn { seen.value.withLock { $0 = 42 } }
        thread.join()
        #expect(seen.value.withLock { $0 } == 42)
    }
}
