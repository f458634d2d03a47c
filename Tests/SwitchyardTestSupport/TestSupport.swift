import SwitchyardSystem
package import SwitchyardUV
import Synchronization

/// A failure raised by the test helpers themselves.
package struct TestFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// How long a single wait in a test may take, in seconds. `SWITCHYARD_TEST_TIMEOUT` raises it on slow machines
/// (sourcekit-lsp's `Timeouts.swift` does the same).
package let defaultTimeout: Double = {
    if let text = SystemProcess.environmentValue("SWITCHYARD_TEST_TIMEOUT"), let value = Double(text) {
        return value
    }
    return 20
}()

/// The folder holding the built products (plugins, the CLI) next to the test binary.
package let productsDirectory: String = {
    if let override = SystemProcess.environmentValue("SWITCHYARD_PRODUCTS_DIR") { return override }
    let executable = SystemProcess.executablePath ?? CommandLine.arguments[0]
    var directory = FileSystem.parentDirectory(of: executable)
    // `swift test` runs `<bin>/SwitchyardPackageTests.xctest`; on some setups the binary sits inside a bundle.
    if directory.hasSuffix(".xctest/Contents/MacOS") {
        directory = FileSystem.parentDirectory(
            of: FileSystem.parentDirectory(of: FileSystem.parentDirectory(of: directory)))
    }
    return directory
}()

/// The package's root folder, for `Plugins/`, `Protocol/` and shared test data.
package let packageRoot: String = {
    var directory = FileSystem.parentDirectory(of: #filePath)
    while directory != "/" && !FileSystem.exists("\(directory)/Package.swift") {
        directory = FileSystem.parentDirectory(of: directory)
    }
    return directory
}()

/// Path of a built product, e.g. `product("switchyard")`.
package func product(_ name: String) -> String { "\(productsDirectory)/\(name)" }

/// Runs `body` with a deadline: a hang becomes a failure naming `what`, instead of freezing CI.
///
/// Bounded even when `body` ignores cancellation (a task group would wait for it): the caller resumes at the
/// deadline, `body` is cancelled and left to finish on its own.
package func withDeadline<T: Sendable>(
    seconds: Double = defaultTimeout, _ what: String = "operation",
    _ body: @Sendable @escaping () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.start(
                continuation,
                work: Task {
                    do { race.finish(.success(try await body())) } catch { race.finish(.failure(error)) }
                },
                timer: Task {
                    try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                    race.finish(.failure(TestFailure("\(what) did not finish within \(seconds) s")))
                })
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The first of the body, the timer and cancellation to finish resumes the waiter and cancels the others.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var tasks: [Task<Void, Never>] = []
        var finished = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>, work: Task<Void, Never>, timer: Task<Void, Never>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if state.finished { return state.early }
            state.continuation = continuation
            state.tasks = [work, timer]
            return nil
        }
        if let early {
            work.cancel()
            timer.cancel()
            continuation.resume(with: early)
        }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard !state.finished else { return (nil, []) }
            state.finished = true
            state.early = result
            defer {
                state.continuation = nil
                state.tasks = []
            }
            return (state.continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(with: result)
    }
}

/// Runs `body` on a fresh loop on its own thread (never on the concurrency pool) until it calls `finish`; see
/// ``runOnLoopThread(_:timeoutMs:_:)``.
package func runOnLoop<Value: Sendable>(
    _ type: Value.Type, timeout: Double = defaultTimeout,
    _ body: sending @escaping (UVLoop, @escaping (Result<Value, any Error>) -> Void) throws -> Void
) async throws -> LoopThreadRun<Value> {
    try await runOnLoopThread(type, timeoutMs: UInt64(timeout * 1000), body)
}

/// Carries a non-Sendable value to exactly one other thread, which then owns it.
package struct UncheckedBox<T>: @unchecked Sendable {
    package let value: T
    package init(_ value: T) { self.value = value }
}

/// Wakes waiters whenever something they watch changed (a log line, an event, an output line): tests wait on the
/// change itself instead of polling, and a wait that outlives its deadline is cancelled instead of leaking.
package final class ChangeNotifier: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    package func notify() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    private var generation: UInt64 { state.withLock { $0.generation } }

    /// Returns once a notification came after generation `seen`, or the task was cancelled.
    private func changed(since seen: UInt64) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.generation != seen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Waits until `condition` holds, re-checking after every notification; fails after `seconds`.
    package func wait(
        _ what: String, seconds: Double = defaultTimeout, until condition: @Sendable @escaping () -> Bool
    ) async throws {
        try await withDeadline(seconds: seconds, what) {
            while true {
                let seen = self.generation
                if condition() { return }
                await self.changed(since: seen)
                try Task.checkCancellation()
            }
        }
    }
}
