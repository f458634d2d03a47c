import Glibc
import Synchronization

/// Appends lines to a file from its own thread, bounded on disk and in memory, so that the thread producing them (a
/// host's loop) never waits for the disk.
///
/// - **On disk:** when a line would take the file past `maxFileBytes`, the file is renamed to `PATH.1` (replacing the
///   previous one) and a new `PATH` is started. At most twice the bound is kept, and the newest lines are in `PATH`.
///   A line longer than the bound is dropped.
/// - **In memory:** lines wait in a queue of at most `maxQueuedBytes`, counting the batch being written. Past it (the
///   disk fell behind) lines are dropped and counted; the writer puts `droppedLine(count)` where they were, once there
///   is room again.
/// - **The producer** takes a mutex only to append to the queue (never held across I/O). It wakes the writer when
///   the queue was empty; the writer then lets lines gather for ``batchDelayMs`` (or until a quarter of the queue
///   is used) before it writes them, so a steady stream costs at most ~100 wake-ups a second, not one per line (on
///   a small machine, waking a thread per line costs the producer more than the line itself).
/// - **A write error** (a full disk...) stops the writer for good: `onFailure` is called once, on the writer's thread,
///   and later lines are dropped.
///
/// The file is created with mode 0600 (it may hold what the app's users typed) and truncated when opened.
public final class RotatingLineWriter: Sendable {
    /// Counters, for reports and tests.
    public struct Statistics: Sendable, Equatable {
        /// Lines written to the file (drop markers included).
        public var writtenLines = 0
        /// Lines dropped: the queue was full, the line was over the file bound, or writing had failed.
        public var droppedLines = 0
        /// Times the file was moved to `PATH.1`.
        public var rotations = 0
    }

    private enum Entry {
        case line([UInt8])
        case dropped(Int)
    }

    private struct Queue {
        var entries: [Entry] = []
        /// Bytes of the queued lines and of the batch the writer is writing.
        var bytes = 0
        /// Dropped since the last queued line: becomes a marker before the next one.
        var droppedPending = 0
        var closing = false
        var failed = false
        var statistics = Statistics()
    }

    public let path: String
    public let maxFileBytes: Int
    public let maxQueuedBytes: Int
    /// How long the writer lets lines gather once woken: how late a line may reach the file.
    public static let batchDelayMs: UInt64 = 10
    private let queue = Mutex(Queue())
    private let wake = WakeSignal()
    private let finished = WakeSignal()
    private let thread: Mutex<SystemThread?> = Mutex(nil)

    /// Opens (creates or truncates) `path` and starts the writer thread.
    ///
    /// - Parameters:
    ///   - droppedLine: the line standing for `count` dropped lines (without its newline).
    ///   - onFailure: called once, on the writer thread, if writing fails.
    public init(
        path: String, maxFileBytes: Int, maxQueuedBytes: Int = 8 << 20,
        droppedLine: @escaping @Sendable (Int) -> [UInt8],
        onFailure: @escaping @Sendable (SystemError) -> Void = { _ in }
    ) throws(SystemError) {
        self.path = path
        self.maxFileBytes = max(1, maxFileBytes)
        self.maxQueuedBytes = max(1, maxQueuedBytes)
        let fd = try Self.open(path)
        let file = LineFile(fd: fd, path: path, maxBytes: self.maxFileBytes)
        do {
            let started = try SystemThread.spawn { [self] in self.run(file, droppedLine, onFailure) }
            thread.withLock { $0 = started }
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Queues one line (without its newline). Never waits for I/O.
    /// - Returns: false when the line was dropped (queue full, line over the file bound, writer failed or closed).
    @discardableResult
    public func append(_ line: [UInt8]) -> Bool {
        let cost = line.count + 1
        let (accepted, wakeWriter) = queue.withLock { queue -> (Bool, Bool) in
            guard !queue.closing, !queue.failed, cost <= maxFileBytes, queue.bytes + cost <= maxQueuedBytes else {
                queue.droppedPending += 1
                queue.statistics.droppedLines += 1
                return (false, false)
            }
            // Wake the writer for the first line of a batch, and again when a burst fills a quarter of the queue.
            let threshold = maxQueuedBytes / 4
            let wakes = queue.entries.isEmpty || (queue.bytes < threshold && queue.bytes + cost >= threshold)
            if queue.droppedPending > 0 {
                queue.entries.append(.dropped(queue.droppedPending))
                queue.droppedPending = 0
            }
            queue.entries.append(.line(line))
            queue.bytes += cost
            return (true, wakes)
        }
        if wakeWriter { wake.signal() }
        return accepted
    }

    public var statistics: Statistics { queue.withLock { $0.statistics } }

    /// Writes what is queued, stops the thread and closes the file. Waits at most `timeoutMs` for a slow disk (then
    /// leaves the thread to finish on its own); call it off any loop thread. Later appends are dropped.
    public func close(timeoutMs: UInt64 = 5_000) {
        let first = queue.withLock { queue -> Bool in
            defer { queue.closing = true }
            return !queue.closing
        }
        guard first else { return }
        wake.signal()
        guard finished.wait(timeoutMs: timeoutMs) else { return }
        thread.withLock { thread in
            thread?.join()
            thread = nil
        }
    }

    // MARK: - The writer thread

    private func run(
        _ file: LineFile, _ droppedLine: @Sendable (Int) -> [UInt8], _ onFailure: @Sendable (SystemError) -> Void
    ) {
        var file = file
        var done = false
        while !done {
            _ = wake.wait(timeoutMs: nil)
            // Let the batch gather; a burst past the threshold or close() cuts the wait short.
            if !queue.withLock({ $0.closing }) { _ = wake.wait(timeoutMs: Self.batchDelayMs) }
            let (entries, closing) = queue.withLock { queue -> ([Entry], Bool) in
                var entries = queue.entries
                queue.entries = []
                if queue.closing && queue.droppedPending > 0 {
                    entries.append(.dropped(queue.droppedPending))
                    queue.droppedPending = 0
                }
                return (entries, queue.closing)
            }
            var written = 0
            var writtenBytes = 0
            var rotations = 0
            var failure: SystemError?
            for entry in entries where failure == nil {
                let line: [UInt8]
                switch entry {
                case .line(let bytes):
                    line = bytes
                    writtenBytes += bytes.count + 1
                case .dropped(let count): line = droppedLine(count)
                }
                do throws(SystemError) {
                    if try file.write(line) { rotations += 1 }
                    written += 1
                } catch {
                    failure = error
                }
            }
            do throws(SystemError) { try file.flush() } catch { failure = failure ?? error }
            queue.withLock { queue in
                queue.bytes -= writtenBytes
                queue.statistics.writtenLines += written
                queue.statistics.rotations += rotations
                if failure != nil {
                    queue.failed = true
                    queue.statistics.droppedLines += entries.count - written + queue.entries.count
                    queue.entries = []
                    queue.bytes = 0
                }
            }
            if let failure { onFailure(failure) }
            done = closing || failure != nil
        }
        file.close()
        finished.signal()
    }

    private static func open(_ path: String) throws(SystemError) -> Int32 {
        let fd = retryingEINTR { Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }
        if fd < 0 { throw SystemError(errno: errno, operation: "open \(path)") }
        return fd
    }

    /// The file as the writer thread sees it: its descriptor, its size, and a buffer that batches small lines into
    /// few `write` calls.
    private struct LineFile {
        var fd: Int32
        let path: String
        let maxBytes: Int
        var size = 0
        var buffer: [UInt8] = []

        init(fd: Int32, path: String, maxBytes: Int) {
            self.fd = fd
            self.path = path
            self.maxBytes = maxBytes
            buffer.reserveCapacity(64 << 10)
        }

        /// Appends one line (and its newline), moving the file aside first when the line would not fit.
        /// - Returns: whether the file was rotated.
        mutating func write(_ line: [UInt8]) throws(SystemError) -> Bool {
            let cost = line.count + 1
            var rotated = false
            if size + cost > maxBytes && size > 0 {
                try rotate()
                rotated = true
            }
            buffer.append(contentsOf: line)
            buffer.append(0x0A)
            size += cost
            if buffer.count >= 64 << 10 { try flush() }
            return rotated
        }

        mutating func flush() throws(SystemError) {
            guard !buffer.isEmpty else { return }
            let failure = writeFully(buffer) { Glibc.write(fd, $0, $1) }
            buffer.removeAll(keepingCapacity: true)
            if failure != 0 { throw SystemError(errno: failure, operation: "write \(path)") }
        }

        mutating func rotate() throws(SystemError) {
            try flush()
            Glibc.close(fd)
            fd = -1
            if Glibc.rename(path, path + ".1") != 0 { throw SystemError(errno: errno, operation: "rename \(path)") }
            fd = try RotatingLineWriter.open(path)
            size = 0
        }

        mutating func close() {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }
}
