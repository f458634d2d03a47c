@testable import SwitchyardNavigation
import SwitchyardProtocol
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

    /// A random step, mostly one that can succeed, often one of the other libraries' steps (§12.5, §12.7): tabs set
    /// at run time, badges, the pushes-only pops, the shared path's pop, a forced presentation (which selects the
    /// tabs above it), with plain routes and tab selections to build up something to pop and tabs to switch back.
    static func libraryStep(_ app: App, _ instance: Instance, _ rng: inout SeededGenerator) -> NavigationStep {
        let routes = app.registry.declaration(of: instance)?.routes ?? []
        let tabs = instance.tabs.map(\.route)
        func params(_ route: RouteDeclaration) -> JSONValue? {
            guard let declared = route.params, !declared.isEmpty else { return nil }
            var object: JSONObject = [:]
            for param in declared { object[param.name] = param.type == .integer ? .int(3) : .string("1") }
            return .object(object)
        }
        switch Int.random(in: 0..<10, using: &rng) {
        case 0:
            let declared = routes.filter { $0.transition == .tab }.map(\.name)
            var chosen = Array(
                declared.shuffled(using: &rng).prefix(Int.random(in: 1...max(1, declared.count), using: &rng)))
            if Int.random(in: 0..<8, using: &rng) == 0 { chosen.append("bogus") }
            return .setTabs(chosen)
        case 1:
            return .setBadge(tabs.randomElement(using: &rng) ?? "bogus", [nil, "1", "new"].randomElement(using: &rng)!)
        case 2: return .popPushed
        case 3: return .popPushedToRoot
        case 4: return .popPath
        case 5, 6:
            let presentable = routes.filter { $0.transition.isModal || $0.allows(.modal) }
            guard let route = presentable.randomElement(using: &rng) else { return randomStep(app, instance, &rng) }
            return .forcePresent(route.name, params(route))
        case 7:
            guard let tab = tabs.randomElement(using: &rng) else { return randomStep(app, instance, &rng) }
            return .selectTab(tab)
        default:
            guard let route = routes.filter({ $0.transition.isStackEntry }).randomElement(using: &rng) else {
                return randomStep(app, instance, &rng)
            }
            return .route(route.name, params(route))
        }
    }

    /// One random operation of a walk: where it started, what it ran, the tree before and how it ended.
    struct Operation {
        let label: String
        let steps: [NavigationStep]
        let before: NavigationTree
        let beforeJSON: String
        let outcome: Result<ChainResult, ResponseError>
    }

    /// Forty random chains from random instances (some plugin answers rejected), each followed by `check`.
    static func walk(
        _ seed: UInt64, step: (App, Instance, inout SeededGenerator) -> NavigationStep = randomStep,
        _ check: (inout App, Operation) -> Void
    ) throws {
        var rng = SeededGenerator(seed: seed)
        var app = try App()
        if Bool.random(using: &rng) { try app.logIn() }
        for operation in 0..<40 {
            let instances = app.tree.allInstances.sorted { $0.id < $1.id }
            let start = instances.randomElement(using: &rng)!
            let chainLength = Int.random(in: 1...3, using: &rng)
            var steps: [NavigationStep] = []
            for _ in 0..<chainLength { steps.append(step(app, start, &rng)) }
            let rejectSome = Int.random(in: 0..<8, using: &rng) == 0
            app.loggedIn = Bool.random(using: &rng)
            let before = app.tree
            let beforeJSON = app.snapshotJSON
            var coin = SeededGenerator(seed: seed &* 1_000 &+ UInt64(operation))
            let outcome: Result<ChainResult, ResponseError>
            do throws(ResponseError) {
                outcome = .success(
                    try app.run(steps, from: start.id) { need in
                        rejectSome && Bool.random(using: &coin) ? Self.reject(need) : nil
                    })
            } catch {
                outcome = .failure(error)
            }
            check(
                &app,
                Operation(
                    label: "seed \(seed) op \(operation) \(steps)", steps: steps, before: before,
                    beforeJSON: beforeJSON, outcome: outcome))
        }
    }

    @Test(
        "ids stay unique, every child has one parent, revisions only grow, and a failure changes nothing",
        arguments: seeds)
    func randomSequences(_ seed: UInt64) throws {
        var seenInstances = Set<InstanceID>()
        var highestInstance: Int64?
        try Self.walk(seed) { app, operation in
            if highestInstance == nil {
                seenInstances = Set(operation.before.allInstances.map(\.id))
                highestInstance = seenInstances.map(\.rawValue).max() ?? 0
            }
            let revision = operation.before.revision
            switch operation.outcome {
            case .success(let result):
                #expect(app.tree.revision == revision + (result.changed ? 1 : 0), "\(operation.label)")
                if !result.changed {
                    #expect(app.snapshotJSON == operation.beforeJSON, "\(operation.label): unchanged but different")
                }
            case .failure(let error):
                #expect(
                    app.snapshotJSON == operation.beforeJSON,
                    "\(operation.label): a failed chain changed the tree (\(error))")
                #expect(app.tree.revision == revision)
            }
            app.checkInvariants()
            // Every instance is reachable from the root, and new ids are never old ones.
            #expect(
                app.tree.subtree(of: app.tree.rootID!).count == app.tree.count,
                "\(operation.label): unreachable instances")
            let highestBefore = highestInstance ?? 0
            for instance in app.tree.allInstances where !seenInstances.contains(instance.id) {
                #expect(instance.id.rawValue > highestBefore, "seed \(seed): id \(instance.id) reused")
                highestInstance = max(highestInstance ?? 0, instance.id.rawValue)
                seenInstances.insert(instance.id)
            }
        }
    }

    @Test(
        "every entry a chain removes is reported once to its owner, every instance it removes is destroyed once, after its entries and after its descendants (§12.1, §8)",
        arguments: seeds)
    func removalsReported(_ seed: UInt64) throws {
        try Self.walk(seed) { app, operation in
            guard case .success(let result) = operation.outcome else { return }
            var reported: [EntryID: (instance: InstanceID, route: String)] = [:]
            var destroyed: [InstanceID] = []
            for effect in result.effects {
                switch effect {
                case .dismissed(let instance, _, let entry, let route, _):
                    #expect(
                        reported.updateValue((instance, route), forKey: entry) == nil,
                        "\(operation.label): entry \(entry) reported twice")
                    #expect(
                        !destroyed.contains(instance),
                        "\(operation.label): entry \(entry) reported after its instance \(instance) was destroyed")
                case .destroy(let instance, _, _):
                    #expect(!destroyed.contains(instance), "\(operation.label): \(instance) destroyed twice")
                    let ancestors = operation.before.ancestors(of: instance)
                    #expect(
                        !destroyed.contains(where: ancestors.contains),
                        "\(operation.label): \(instance) was destroyed after an ancestor of it")
                    destroyed.append(instance)
                case .tabSelected, .appeared:
                    break
                }
            }
            // What was in the tree before and is gone now was reported (entries) or destroyed (instances).
            let after = Set(app.tree.allInstances.flatMap(\.allEntries).map(\.id))
            for instance in operation.before.allInstances {
                if app.tree[instance.id] == nil {
                    #expect(
                        destroyed.contains(instance.id),
                        "\(operation.label): instance \(instance.id) left without coordinator/destroy")
                }
                for entry in instance.allEntries where !after.contains(entry.id) {
                    #expect(
                        reported[entry.id]?.instance == instance.id && reported[entry.id]?.route == entry.route,
                        "\(operation.label): entry \(entry.id) (\(entry.route)) of \(instance.id) left without coordinator/dismissed to its owner"
                    )
                }
            }
            for entry in reported.keys {
                #expect(!after.contains(entry), "\(operation.label): entry \(entry) reported but still in the tree")
            }
            for instance in destroyed {
                #expect(app.tree[instance] == nil, "\(operation.label): \(instance) destroyed but still in the tree")
            }
        }
    }

    @Test(
        "every instance a chain changes is in its `touched` (commits merge by it, the host's patches for watchers are built from it), the other libraries' steps included",
        arguments: seeds)
    func touchedIsComplete(_ seed: UInt64) throws {
        try Self.walk(seed, step: Self.libraryStep) { _, operation in
            guard case .success(let result) = operation.outcome else { return }
            let ids = Set(operation.before.allInstances.map(\.id)).union(result.tree.allInstances.map(\.id))
            for id in ids.sorted() where operation.before[id] != result.tree[id] {
                #expect(result.touched.contains(id), "\(operation.label): instance \(id) changed but is not in touched")
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
