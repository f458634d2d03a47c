import SwitchyardSystem

/// Runs `body`, which blocks (a child process to its end, a socket's answer, a `swift build`), on a thread of its own
/// and awaits its result.
///
/// Swift Testing runs every test on the cooperative pool, which has one thread per core. On a two-core machine a
/// test that blocks a pool thread for minutes halves every other suite's progress, and two such waits stop them: a
/// cold run met both (an in-process suite ran into its time limit; a host's start was not awaited within 40 s
/// although the host had logged it). `Task.detached` does not help: it runs on the same pool.
///
/// Cancellation (a test's time limit) does not end `body`: give it a bound of its own (every `SystemProcess.run`
/// has one).
package func onThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        do {
            try SystemThread.spawn { continuation.resume(with: Result { try body() }) }.detach()
        } catch {
            continuation.resume(throwing: TestFailure("cannot start a thread for a blocking wait: \(error)"))
        }
    }
}
