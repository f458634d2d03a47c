import SwitchyardSystem
package import Testing
import Synchronization

/// At most a few heavy suites (real hosts, real plugin processes, builds) run at once: on a 2-core machine, forty
/// hosts starting together starve each other into timeouts, which a larger timeout would only hide.
///
/// The permit is taken at the suite's scope, outside each test's time limit, so waiting for a turn never counts
/// against a test; tests inside a suite still run in parallel.
package struct HeavySuite: SuiteTrait, TestScoping {
    /// How many heavy suites may run at once (`SWITCHYARD_HEAVY_SUITES`, default 3).
    static let count =
        SystemProcess.environmentValue("SWITCHYARD_HEAVY_SUITES").flatMap { Int($0) }.map { max(1, $0) } ?? 3
    static let permits = AsyncSemaphore(permits: count)
    /// One suite at a time gathers every permit, so two that want to run alone cannot each hold part of them.
    static let gathering = AsyncSemaphore(permits: 1)

    /// Whether the suite runs with no other heavy suite beside it (it measures latency).
    let alone: Bool

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let needed = alone ? Self.count : 1
        if alone { await Self.gathering.acquire() }
        for _ in 0..<needed { await Self.permits.acquire() }
        if alone { Self.gathering.release() }
        defer { for _ in 0..<needed { Self.permits.release() } }
        try await function()
    }
}

extension Trait where Self == HeavySuite {
    /// Marks a suite that starts hosts, plugins or builds: see ``HeavySuite``.
    package static var heavy: Self { HeavySuite(alone: false) }
    /// A heavy suite that runs with no other heavy suite beside it.
    package static var heavyAlone: Self { HeavySuite(alone: true) }
}

/// A counting semaphore for tasks: waiters suspend (in FIFO order) instead of blocking a thread.
package final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    package init(permits: Int) { state = Mutex(State(available: permits)) }

    package func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
