/// The requests waiting for a plugin that will serve shortly, as a value (spec §20): held while an upgrade moves
/// the plugin's instances to its new version, or waiting for a lazy or hibernated plugin to start. Each waits at most
/// until its own deadline; the owner decides when to let them go (the plugin serves again, or will not) and arms one
/// timer for ``nextDeadline``. No loop, no plugin, no clock: tested on its own (`PolicyTests`).
package struct RequestGate<Waiter> {
    /// New requests wait even though the plugin is ready (an upgrade between its hold and its switch).
    package private(set) var isHeld = false
    /// Requests that waited since the last ``hold()``, for the upgrade's report.
    package private(set) var heldCount = 0
    private var waiting: [(number: Int, deadline: UInt64, waiter: Waiter)] = []
    private var next = 0

    package init() {}

    /// How many requests wait.
    package var count: Int { waiting.count }

    /// The earliest deadline of a waiting request.
    package var nextDeadline: UInt64? { waiting.lazy.map(\.deadline).min() }

    /// From now on requests wait even when the plugin is ready.
    package mutating func hold() {
        isHeld = true
        heldCount = 0
    }

    /// Requests no longer wait for an upgrade; the caller hands the waiting ones the session (``releaseAll()``).
    package mutating func open() { isHeld = false }

    /// `waiter` waits until it is released or `deadline` (loop milliseconds) passes.
    package mutating func wait(_ waiter: Waiter, deadline: UInt64) {
        next += 1
        waiting.append((next, deadline, waiter))
        if isHeld { heldCount += 1 }
    }

    /// Every waiter, in the order they came: the plugin serves (or will not); they are resumed with its answer.
    package mutating func releaseAll() -> [Waiter] {
        defer { waiting.removeAll() }
        return waiting.map(\.waiter)
    }

    /// The waiters whose deadline is at or before `now`, in the order they came; they fail with a timeout.
    package mutating func expire(now: UInt64) -> [Waiter] {
        var expired: [Waiter] = []
        waiting.removeAll { item in
            guard item.deadline <= now else { return false }
            expired.append(item.waiter)
            return true
        }
        return expired
    }
}
