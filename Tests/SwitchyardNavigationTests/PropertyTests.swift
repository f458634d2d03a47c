@testable import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardTesting
import Testing

@Suite("Tree properties under random operation sequences", .timeLimit(.minutes(1)))
struct PropertyTests {
    static let seeds: [UInt64] = Array(1...60)

    /// A random step: mostly plausible for the instance, sometimes nonsense.
    static func randomStep(_ app: App, _ instance: Instance, _ rng: inout SeededGenerator) -> NavigationStep {
        let routes = app.registry.declaration(of: instance)?.routes ?? []
        let route = Bool.random(using: &rng) || routes.isEmpty ? "bogus" : routes.randomElement(using: &rng)!.name
        let params: JSONValue? = [nil, ["id": "1"], ["id": "2"], ["id": 3], ["nope": true]].randomElement(using: &rng)!
        let entry = instance.allEntries.randomElement(using: &rng)?.id ?? EntryID(999_999)
        switch Int.random(in: 0..<19, using: &rng) {
        case 0, 1, 2: return .route(route, params)
        case 3: return .popLast
        case 4: return .pop(Bool.random(using: &rng) ? entry : EntryID(999_999))
        case 5: return .popTo(Int.random(in: -2...4, using: &rng))
        case 6: return .popCount(Int.random(in: 0...3, using: &rng))
        case 7: return .popToRoot
        case 8: return .popToInitialRoute
        case 9: return .setRoot(route, params)
        case 10: return .focusFirst(route, Bool.random(using: &rng) ? nil : params)
        case 11: return .selectTab(route)
        case 12: return .dismiss
        case 13: return .close
        case 14: return .dismissCoordinator
        case 15: return .finishFlow
        case 16: return .restart
        case 17: return [.child, .parent, .top].randomElement(using: &rng)!
        default: return .hasRoot(route, Bool.random(using: &rng) ? nil : params)
        }
    }

    @Test("ids stay unique, every child has one parent, revisions only grow, and a failure changes nothing", arguments: seeds)
    func randomSequences(_ seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var app = try App()
        if Bool.random(using: &rng) { try app.logIn() }
        var seenInstances = Set(app.tree.allInstances.map(\.id))
        var highestInstance = seenInstances.map(\.rawValue).max() ?? 0
        for operation in 0..<40 {
            let instances = app.tree.allInstances.sorted { $0.id < $1.id }
            let start = instances.randomElement(using: &rng)!
            let chainLength = Int.random(in: 1...3, using: &rng)
            var steps: [NavigationStep] = []
            for _ in 0..<chainLength { steps.append(Self.randomStep(app, start, &rng)) }
            let rejectSome = Int.random(in: 0..<8, using: &rng) == 0
            app.loggedIn = Bool.random(using: &rng)
            let before = app.snapshotJSON
            let revision = app.tree.revision
            var coin = SeededGenerator(seed: seed &* 1_000 &+ UInt64(operation))
            do {
                let result = try app.run(steps, from: start.id) { need in
                    rejectSome && Bool.random(using: &coin) ? Self.reject(need) : nil
                }
                #expect(app.tree.revision == revision + (result.changed ? 1 : 0), "seed \(seed) op \(operation)")
                if !result.changed { #expect(app.snapshotJSON == before, "seed \(seed) op \(operation): unchanged but different") }
            } catch {
                #expect(app.snapshotJSON == before, "seed \(seed) op \(operation) \(steps): a failed chain changed the tree (\(error))")
                #expect(app.tree.revision == revision)
            }
            app.checkInvariants()
            // Every instance is reachable from the root, and new ids are never old ones.
            #expect(app.tree.subtree(of: app.tree.rootID!).count == app.tree.count, "seed \(seed) op \(operation): unreachable instances")
            let highestBefore = highestInstance
            for instance in app.tree.allInstances where !seenInstances.contains(instance.id) {
                #expect(instance.id.rawValue > highestBefore, "seed \(seed): id \(instance.id) reused")
                highestInstance = max(highestInstance, instance.id.rawValue)
                seenInstances.insert(instance.id)
            }
        }
    }

    static func reject(_ need: ChainNeed) -> ChainAnswer {
        switch need {
        case .route: .route(.failure(ResponseError(.rejectedByGuard, "random guard")))
        case .create: .create(.failure(ResponseError(.internalError, "random failure")))
        }
    }
}

