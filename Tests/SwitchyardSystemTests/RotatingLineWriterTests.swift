import Glibc
import SwitchyardSystem
import SwitchyardTestSupport
import Synchronization
import Testing

@Suite("Rotating line writer (the trace file)", .timeLimit(.minutes(2)))
struct RotatingLineWriterTests {
    static func lines(_ path: String) throws -> [String] {
        String(decoding: try FileSystem.readFile(path), as: UTF8.self).split(separator: "\n").map(String.init)
    }

    static func dropped(_ count: Int) -> [UInt8] { Array("dropped \(count)".utf8) }

    @Test("the file moves to FILE.1 at the bound: both stay within it and together hold the newest lines in order")
    func rotation() throws {
        let path = try TestSweep.temporaryDirectory() + "/trace.jsonl"
        let writer = try RotatingLineWriter(path: path, maxFileBytes: 1_000, droppedLine: Self.dropped)
        let all = (0..<100).map { "line \($0) " + String(repeating: "x", count: 40) }
        for line in all { #expect(writer.append(Array(line.utf8))) }
        writer.close()

        let current = try Self.lines(path)
        let previous = try Self.lines(path + ".1")
        #expect(try FileSystem.readFile(path).count <= 1_000)
        #expect(try FileSystem.readFile(path + ".1").count <= 1_000)
        #expect(current.last == all.last)
        // FILE.1 then FILE: a contiguous run of the newest lines, nothing lost at the seam.
        let kept = previous + current
        #expect(kept == Array(all.suffix(kept.count)))
        let statistics = writer.statistics
        #expect(statistics.writtenLines == 100 && statistics.droppedLines == 0 && statistics.rotations >= 4)
        #expect(FileSystem.permissions(path) == 0o600)
        #expect(!writer.append(Array("after close".utf8)), "a closed writer drops")
    }

    @Test("a line longer than the bound is dropped, and a marker takes its place")
    func oversizeLine() throws {
        let path = try TestSweep.temporaryDirectory() + "/trace.jsonl"
        let writer = try RotatingLineWriter(path: path, maxFileBytes: 100, droppedLine: Self.dropped)
        #expect(writer.append(Array("first".utf8)))
        #expect(!writer.append([UInt8](repeating: UInt8(ascii: "y"), count: 100)))
        #expect(writer.append(Array("second".utf8)))
        writer.close()
        #expect(try Self.lines(path) == ["first", "dropped 1", "second"])
        #expect(writer.statistics.droppedLines == 1)
    }

    @Test("a stalled disk never blocks append: past the queue bound lines are dropped and the gap is marked")
    func stalledDisk() throws {
        // A FIFO nobody reads yet stands for a disk that stopped: the writer thread blocks in write(2).
        let path = try TestSweep.temporaryDirectory() + "/stalled"
        #expect(unsafe mkfifo(path, 0o600) == 0)
        let reader = unsafe open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(reader >= 0)
        defer { close(reader) }
        let writer = try RotatingLineWriter(
            path: path, maxFileBytes: 1 << 30, maxQueuedBytes: 16 << 10, droppedLine: Self.dropped)
        var accepted: [String] = []
        var droppedCount = 0
        // 400 KB against 64 KiB of pipe and 16 KiB of queue: the writer cannot keep up, and every call returns.
        for index in 0..<4_000 {
            let line = "line \(index) " + String(repeating: "z", count: 90)
            if writer.append(Array(line.utf8)) { accepted.append(line) } else { droppedCount += 1 }
        }
        #expect(droppedCount > 0)
        #expect(writer.statistics.droppedLines == droppedCount)

        // The disk comes back: a thread of its own drains the FIFO until EOF (the writer closed its end), while this
        // one closes the writer, which writes what it still holds and the last gap marker.
        let drained = Mutex<[UInt8]>([])
        let drainer = try SystemThread.spawn {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            let deadline = MonotonicClock.nanoseconds + UInt64(defaultTimeout * 1e9)
            while MonotonicClock.nanoseconds < deadline {
                var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
                guard unsafe poll(&descriptor, 1, 1_000) >= 0 else { continue }
                let count = unsafe buffer.withUnsafeMutableBytes { unsafe read(reader, $0.baseAddress, $0.count) }
                if count > 0 {
                    drained.withLock { $0 += buffer.prefix(count) }
                } else if count == 0 {
                    return  // no writer holds the FIFO open any more
                }
            }
        }
        writer.close(timeoutMs: UInt64(defaultTimeout * 1_000))
        drainer.join()
        let lines = String(decoding: drained.withLock { $0 }, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.filter { !$0.hasPrefix("dropped ") } == accepted, "every accepted line, in order")
        let marked = lines.compactMap { $0.hasPrefix("dropped ") ? Int($0.dropFirst(8)) : nil }.reduce(0, +)
        #expect(marked == droppedCount, "the markers account for every dropped line")
    }
}
