import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Pending output, written in one `write` per batch.
struct Output {
    var descriptor: FileDescriptor?
    private var buffer: [UInt8] = []

    mutating func append(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    mutating func flush() {
        guard !buffer.isEmpty else { return }
        // Not started by ``PluginRuntime/run(_:)`` yet: keep the bytes until stdout is known.
        guard let descriptor else { return }
        do {
            _ = try descriptor.writeAll(buffer)
        } catch {
            // The host is gone (EPIPE): the contract is to exit.
            exit(0)
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Lines from the reader thread to the main actor.
final class Inbox: Sendable {
    private struct State {
        var lines: [String] = []
        var closed = false
        var drainScheduled = false
    }

    private let state = Mutex(State())

    /// Adds a line; returns true if the caller must schedule a drain.
    func push(_ line: String) -> Bool {
        state.withLock { state in
            state.lines.append(line)
            if state.drainScheduled { return false }
            state.drainScheduled = true
            return true
        }
    }

    func close() {
        state.withLock { $0.closed = true }
    }

    /// Takes every queued line; when there are none, the next push schedules a new drain.
    func take() -> ([String], Bool) {
        state.withLock { state in
            let lines = state.lines
            state.lines.removeAll(keepingCapacity: true)
            if lines.isEmpty { state.drainScheduled = false }
            return (lines, state.closed)
        }
    }
}

/// Moves a main-actor object into a closure that only ever uses it back on the main actor.
struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
