import Synchronization
import SwitchyardSystem

/// The outcome of ``runOnLoopThread(_:timeoutMs:_:)``.
public struct LoopThreadRun<Value: Sendable>: Sendable {
    public let value: Value
    /// Handles still open when the body finished (tests assert 0, as libuv's `MAKE_VALGRIND_HAPPY` does).
    public let leakedHandles: Int
}

/// A loop body gave up: it did not call `finish` within its time limit.
public struct LoopThreadTimeout: Error, CustomStringConvertible {
    public let milliseconds: UInt64
    public var description: String { "loop body did not finish within \(milliseconds) ms" }
}

/// Runs `body` on a fresh loop on its own thread until it calls `finish`, then closes the loop.
///
/// A loop timer enforces the time limit. After `finish`, pending close callbacks run and the handles still open are
/// counted. Used by tests and the benchmark; the host has a ``SystemThread`` plus its own lifecycle. `body` is sent
/// to the loop's thread, which owns it from then on.
public func runOnLoopThread<Value: Sendable>(
    _ type: Value.Type, timeoutMs: UInt64,
    _ body: sending @escaping (UVLoop, @escaping (Result<Value, any Error>) -> Void) throws -> Void
) async throws -> LoopThreadRun<Value> {
    let outcome = LoopOutcome<LoopThreadRun<Value>>()
    _ = try SystemThread.spawn { outcome.deliver(runLoopBody(timeoutMs: timeoutMs, body)) }
    return try await outcome.value()
}

/// A loop thread's outcome, handed to the task awaiting it whichever comes first, the outcome or the wait: the
/// thread owns the body it was sent, and only this Sendable value crosses back.
private final class LoopOutcome<Value: Sendable>: Sendable {
    private enum State {
        case pending
        case awaited(CheckedContinuation<Value, any Error>)
        case delivered(Result<Value, any Error>)
    }

    private let state = Mutex(State.pending)

    func deliver(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            defer { state = .delivered(result) }
            if case .awaited(let continuation) = state { return continuation }
            return nil
        }
        waiter?.resume(with: result)
    }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let delivered = state.withLock { state -> Result<Value, any Error>? in
                if case .delivered(let result) = state { return result }
                state = .awaited(continuation)
                return nil
            }
            if let delivered { continuation.resume(with: delivered) }
        }
    }
}

private func runLoopBody<Value: Sendable>(
    timeoutMs: UInt64, _ body: @escaping (UVLoop, @escaping (Result<Value, any Error>) -> Void) throws -> Void
) -> Result<LoopThreadRun<Value>, any Error> {
    let loop: UVLoop
    let deadline: UVTimer
    do {
        loop = try UVLoop()
        deadline = try UVTimer(loop: loop)
    } catch { return .failure(error) }
    var outcome: Result<Value, any Error>?
    let finish: (Result<Value, any Error>) -> Void = { result in
        guard outcome == nil else { return }
        outcome = result
        deadline.close()
        loop.stop()
    }
    do {
        try deadline.start(after: timeoutMs) { finish(.failure(LoopThreadTimeout(milliseconds: timeoutMs))) }
        try body(loop, finish)
    } catch {
        finish(.failure(error))
    }
    if outcome == nil { loop.run() }
    // Let close callbacks that the body started run before counting.
    for _ in 0..<20 { loop.runNoWait() }
    let leaked = loop.liveHandleCount
    loop.close()
    switch outcome {
    case .success(let value): return .success(LoopThreadRun(value: value, leakedHandles: leaked))
    case .failure(let error): return .failure(error)
    case nil: return .failure(LoopThreadTimeout(milliseconds: 0))
    }
}
