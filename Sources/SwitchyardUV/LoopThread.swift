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
/// counted. Used by tests and the benchmark; the host has ``UVThread`` plus its own lifecycle.
public func runOnLoopThread<Value: Sendable>(
    _ type: Value.Type, timeoutMs: UInt64,
    _ body: @escaping (UVLoop, @escaping (Result<Value, any Error>) -> Void) throws -> Void
) async throws -> LoopThreadRun<Value> {
    let box = TransferBox(body)
    return try await withCheckedThrowingContinuation { continuation in
        do {
            _ = try UVThread.spawn {
                continuation.resume(with: runLoopBody(timeoutMs: timeoutMs, box.value))
            }
        } catch {
            continuation.resume(throwing: error)
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

/// Moves a non-Sendable value to exactly one other thread, which then owns it.
struct TransferBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
