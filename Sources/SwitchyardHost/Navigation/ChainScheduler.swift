/// The navigator's scheduling rules for concurrent chains, as a value: no loop, no plugin, no clock.
///
/// Chains run optimistically and concurrently; three rules keep that safe, and all of them live here so they can
/// be tested one decision at a time (`PolicyTests`):
/// - **Incarnations.** A chain remembers which incarnation of each plugin it consulted. If a plugin process died
///   (and maybe restarted) before the chain commits, the chain must not commit: the new process never saw what the
///   old one answered.
/// - **`maxInstances`.** The new instances a chain has asked a plugin to create count against the plugin's limit
///   before the chain commits, so one chain cannot plan more than the limit allows.
/// - **Per-plugin ordering.** A plugin request (a `navigate` or a query sent by the plugin) waits for every chain
///   that has already consulted that plugin: the plugin's factory ran, its state moved, and its next request must
///   see that chain's outcome, not the tree from before it. Chains that never consulted the plugin do not delay it.
package struct ChainScheduler<Waiter> {
    /// A chain in flight.
    package struct Chain: Hashable, Sendable {
        package let number: Int
    }

    /// Chains in flight, each with the plugins it has consulted so far (and which incarnation of each).
    private var consulted: [Int: [String: Int]] = [:]
    /// New instances each chain in flight has asked plugins to create, per plugin.
    private var creating: [Int: [String: Int]] = [:]
    /// Plugin requests held back, with the chains each still waits for.
    private var heldBack: [(waitingFor: Set<Int>, waiter: Waiter)] = []
    private var next = 0

    package init() {}

    /// Chains not finished yet.
    package var chainsInFlight: Int { consulted.count }

    /// Requests held back.
    package var waiting: Int { heldBack.count }

    /// Starts a chain.
    package mutating func begin() -> Chain {
        defer { next += 1 }
        consulted[next] = [:]
        return Chain(number: next)
    }

    /// The chain is about to ask `plugin` something; `incarnation` is the plugin's current one. The first question
    /// to a plugin records it.
    package mutating func consult(_ plugin: String, incarnation: Int, by chain: Chain) {
        guard consulted[chain.number] != nil, consulted[chain.number]?[plugin] == nil else { return }
        consulted[chain.number]?[plugin] = incarnation
    }

    /// Whether the chain may ask `plugin` to create one more new instance, given the instances it owns in the
    /// committed tree and its limit; if so, the creation is counted until the chain finishes.
    package mutating func reserveCreation(of plugin: String, by chain: Chain, owned: Int, limit: Int) -> Bool {
        let planned = (creating[chain.number]?[plugin] ?? 0) + 1
        guard owned + planned <= limit else { return false }
        creating[chain.number, default: [:]][plugin] = planned
        return true
    }

    /// The first plugin the chain consulted whose incarnation is no longer the one it saw, if any: such a chain
    /// must not commit.
    package func restartedPlugin(of chain: Chain, current: (String) -> Int) -> String? {
        (consulted[chain.number] ?? [:]).first { current($0.key) != $0.value }?.key
    }

    /// Whether any chain in flight has consulted `plugin` (a request from it would wait).
    package func isConsulted(_ plugin: String) -> Bool { consulted.values.contains { $0[plugin] != nil } }

    /// How many chains in flight have consulted `plugin`: what an upgrade's drain still waits for.
    package func consultingCount(_ plugin: String) -> Int { consulted.values.count { $0[plugin] != nil } }

    /// Whether `chain` has consulted `plugin` already: it finishes with that version of the plugin, so an upgrade's
    /// hold lets its requests through (and waits for it).
    package func hasConsulted(_ plugin: String, by chain: Chain) -> Bool { consulted[chain.number]?[plugin] != nil }

    /// Queues `waiter` behind every chain that has already consulted `plugin`; returns it at once (to run now)
    /// when there is none.
    package mutating func whenChainsConsulting(_ plugin: String, finish waiter: Waiter) -> Waiter? {
        let waitingFor = Set(consulted.filter { $0.value[plugin] != nil }.keys)
        guard !waitingFor.isEmpty else { return waiter }
        heldBack.append((waitingFor, waiter))
        return nil
    }

    /// The chain ended (committed, failed, or about to be retried as a new chain). Returns the held-back requests
    /// that waited for nothing else, in the order they arrived.
    package mutating func finish(_ chain: Chain) -> [Waiter] {
        consulted[chain.number] = nil
        creating[chain.number] = nil
        var ready: [Waiter] = []
        heldBack = heldBack.compactMap { entry in
            let waitingFor = entry.waitingFor.subtracting([chain.number])
            if waitingFor.isEmpty {
                ready.append(entry.waiter)
                return nil
            }
            return (waitingFor, entry.waiter)
        }
        return ready
    }
}
