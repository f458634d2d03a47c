@testable import SwitchyardNavigation
import SwitchyardProtocol
import Testing

/// §12.1's order, checked on random apps: random route tables (stacks, tabs and wrappers across two plugins, flows
/// pushed and presented in each other, some presentations locked), random trees grown from them, and then every
/// step that removes entries, from every instance of the tree, each on the same tree. For each step that succeeds:
/// every report comes before every destroy, the reports are top first (the reverse of display order) and the
/// destroys too (so children before their parents). And §12.3: the user's dismissal of an entry is refused exactly
/// when what it would remove holds an entry presented with `interactiveDismissDisabled`, in any stack below.
@Suite("Report and destroy order on random trees (§12.1, §12.3)", .timeLimit(.minutes(1)))
struct ReportOrderTests {
    static let seeds: [UInt64] = Array(1...40)

    @Test("every removing step reports top first and destroys deepest first, after all its reports", arguments: seeds)
    func removalOrder(_ seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let app = try RandomApp.grown(seed: seed, &rng)
        let order = DisplayOrder(app.tree)
        var checked = 0
        for instance in app.tree.allInstances.sorted(by: { $0.id < $1.id }) {
            for step in RandomApp.removingSteps(of: instance, app, &rng) {
                var copy = app
                let runner = ChainRunner(
                    tree: copy.tree, registry: copy.registry, allocator: copy.allocator, start: instance.id,
                    steps: [step])
                guard let result = try? copy.drive(runner) else { continue }
                checked += 1
                let label =
                    "seed \(seed): \(RandomApp.describe(step)) on \(instance.plugin).\(instance.type)\(instance.id)"
                order.check(result.effects, label)
            }
        }
        #expect(checked > 20, "seed \(seed): only \(checked) removing steps succeeded; the trees are too small")
    }

    @Test(
        "the user's dismissal is refused exactly when it would take a locked entry (in any stack below), naming it",
        arguments: seeds)
    func lockedEntries(_ seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let app = try RandomApp.grown(seed: seed, &rng)
        for instance in app.tree.allInstances.sorted(by: { $0.id < $1.id }) where instance.kind == .stack {
            for entry in instance.entries {
                let label = "seed \(seed): user/dismissed e\(entry.id) of \(instance.id)"
                // What a navigation pop of the entry removes: everything its reports name.
                var navigation = app
                let removed = try navigation.run([.pop(entry.id)], from: instance.id).effects.compactMap {
                    if case .dismissed(_, _, let entry, _, _) = $0 { entry } else { nil }
                }
                let locked = Set(
                    app.tree.allInstances.flatMap(\.entries).filter {
                        $0.presentation?.interactiveDismissDisabled == true
                    }
                    .map(\.id))
                let lockedRemoved = removed.filter(locked.contains)
                var user = app
                do {
                    try user.run([.pop(entry.id)], from: instance.id, reason: .user)
                    #expect(lockedRemoved.isEmpty, "\(label): accepted, but it removed locked \(lockedRemoved)")
                } catch {
                    #expect(error.code == .notAllowed, "\(label): \(error)")
                    #expect(!lockedRemoved.isEmpty, "\(label): refused, but nothing it removes is locked: \(error)")
                    let named = error.data?["entry"]?.intValue.map { EntryID($0) }
                    #expect(named.map(lockedRemoved.contains) == true, "\(label): names \(String(describing: named))")
                }
            }
        }
    }
}

/// Positions in display order: an instance's entries in order (root, entries, tabs, child), each followed by what
/// the coordinator it holds shows; an instance right after the entry holding it. §12.1's "top first" is the reverse.
struct DisplayOrder {
    private(set) var entries: [EntryID: Int] = [:]
    private(set) var instances: [InstanceID: Int] = [:]

    init(_ tree: NavigationTree) {
        var counter = 0
        func visit(_ id: InstanceID, level: Int) {
            guard level < 1_000, let instance = tree[id] else { return }
            instances[id] = counter
            counter += 1
            for entry in instance.allEntries {
                entries[entry.id] = counter
                counter += 1
                if let child = entry.content.coordinator { visit(child, level: level + 1) }
            }
        }
        if let root = tree.rootID { visit(root, level: 0) }
    }

    /// The effects, short: `e12` a report, `#4` a destroy.
    static func describe(_ effects: [ChainEffect]) -> String {
        effects.compactMap { effect in
            switch effect {
            case .dismissed(_, _, let entry, _, _): "\(entry)"
            case .destroy(let instance, _, _): "\(instance)"
            case .tabSelected, .appeared: nil
            }
        }.joined(separator: " ")
    }

    /// One step's effects: the reports first, top first; then the destroys, top first (hence deepest first).
    func check(_ effects: [ChainEffect], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var lastReport = Int.max
        var lastDestroy = Int.max
        var destroying = false
        for effect in effects {
            switch effect {
            case .dismissed(_, _, let entry, let route, _):
                #expect(
                    !destroying, "\(label): \(entry) (\(route)) reported after a destroy",
                    sourceLocation: sourceLocation)
                let position = entries[entry] ?? -1
                #expect(
                    position < lastReport,
                    "\(label): \(entry) (\(route)) reported out of order: \(Self.describe(effects))",
                    sourceLocation: sourceLocation)
                lastReport = position
            case .destroy(let instance, _, let type):
                destroying = true
                let position = instances[instance] ?? -1
                #expect(
                    position < lastDestroy,
                    "\(label): \(type)\(instance) destroyed out of order: \(Self.describe(effects))",
                    sourceLocation: sourceLocation)
                lastDestroy = position
            case .tabSelected, .appeared:
                break
            }
        }
    }
}

/// Random route tables and trees grown from them, answered by ``App``'s scripted plugins.
enum RandomApp {
    /// Types `t0` (the root, a stack) to `tN` in plugins `a` and `b`; initial content (a stack's root, a tab, a
    /// wrapper's child) only opens later types, so creation ends; pushed and presented routes open any type (a push
    /// only stacks), and a third of the presented ones are locked.
    static func tables(_ rng: inout SeededGenerator) -> [(plugin: String, coordinators: [CoordinatorDeclaration])] {
        let count = Int.random(in: 4...7, using: &rng)
        var kinds: [CoordinatorKind] = [.stack]
        for _ in 1..<count { kinds.append([.stack, .stack, .stack, .tabs, .wrapper].randomElement(using: &rng)!) }
        // A wrapper needs a later stack or tabs type to wrap; the last types cannot have one.
        for index in kinds.indices
        where kinds[index] == .wrapper && !kinds[(index + 1)...].contains(where: { $0 != .wrapper }) {
            kinds[index] = .stack
        }
        func reference(_ index: Int) -> CoordinatorReference {
            CoordinatorReference(plugin: index % 2 == 0 ? "a" : "b", type: "t\(index)")
        }
        func later(_ index: Int, _ allowed: [CoordinatorKind]) -> Int? {
            kinds.indices.filter { $0 > index && allowed.contains(kinds[$0]) }.randomElement(using: &rng)
        }
        var declarations: [[CoordinatorDeclaration]] = [[], []]
        for (index, kind) in kinds.enumerated() {
            var routes: [RouteDeclaration] = []
            var initial: String?
            switch kind {
            case .stack:
                routes.append(RouteDeclaration(name: "r1", transition: .root))
                if let target = later(index, [.stack, .tabs, .wrapper]) {
                    routes.append(RouteDeclaration(name: "r2", transition: .root, target: reference(target)))
                }
                initial = routes.randomElement(using: &rng)?.name
                for number in 0..<4 {
                    let transition = [Transition.push, .push, .modal, .fullScreen].randomElement(using: &rng)!
                    let candidates = kinds.indices.filter { transition != .push || kinds[$0] == .stack }
                    let target = Bool.random(using: &rng) ? candidates.randomElement(using: &rng) : nil
                    let locked = transition.isModal && Int.random(in: 0..<3, using: &rng) == 0
                    routes.append(
                        RouteDeclaration(
                            name: "e\(number)", transition: transition, target: target.map(reference),
                            presentation: locked ? PresentationOptions(interactiveDismissDisabled: true) : nil))
                }
            case .tabs:
                for number in 0..<Int.random(in: 1...3, using: &rng) {
                    let target = Bool.random(using: &rng) ? later(index, [.stack, .wrapper]) : nil
                    routes.append(
                        RouteDeclaration(name: "tab\(number)", transition: .tab, target: target.map(reference)))
                }
                initial = routes.first?.name
            case .wrapper:
                let target = later(index, [.stack, .tabs]) ?? index
                routes.append(RouteDeclaration(name: "c", transition: .child, target: reference(target)))
            }
            declarations[index % 2].append(
                CoordinatorDeclaration(type: "t\(index)", kind: kind, initialRoute: initial, routes: routes))
        }
        return [("a", declarations[0]), ("b", declarations[1])]
    }

    /// An app on random tables, its tree grown by random routes and tab selections from random instances.
    static func grown(seed: UInt64, _ rng: inout SeededGenerator) throws -> App {
        var app = try App()
        app.registry = RouteRegistry(tables: tables(&rng))
        app.tree = NavigationTree()
        let root = ChainRunner.creatingRoot(
            tree: app.tree, registry: app.registry, allocator: app.allocator, root: .init(plugin: "a", type: "t0"))
        try app.tree.commit(try app.drive(root), startedFrom: NavigationTree())
        for _ in 0..<30 where app.tree.count < 40 {
            let instance = app.tree.allInstances.sorted { $0.id < $1.id }.randomElement(using: &rng)!
            let routes = app.registry.declaration(of: instance)?.routes ?? []
            let step: NavigationStep? =
                switch instance.kind {
                case .stack:
                    routes.filter { $0.transition.isStackEntry }.randomElement(using: &rng).map { .route($0.name) }
                case .tabs: instance.tabs.randomElement(using: &rng).map { .selectTab($0.route) }
                case .wrapper, nil: nil
                }
            if let step { _ = try? app.run([step], from: instance.id) }
        }
        app.checkInvariants()
        return app
    }

    /// A step, short: `pop e12`, `popTo 1`, `setTabs tab1,tab0`.
    static func describe(_ step: NavigationStep) -> String {
        let parts: [String?] = [
            step.op.rawValue, step.route, step.entry.map { "\($0)" }, step.index.map(String.init),
            step.count.map(String.init), step.tabs?.joined(separator: ","), step.keepStack.map { "keepStack \($0)" },
        ]
        return parts.compactMap { $0 }.joined(separator: " ")
    }

    /// Every step that removes entries and could apply to `instance`, with every entry, index and count it takes.
    static func removingSteps(of instance: Instance, _ app: App, _ rng: inout SeededGenerator) -> [NavigationStep] {
        var steps: [NavigationStep] = [.dismissCoordinator, .finishFlow, .restart]
        switch instance.kind {
        case .stack:
            let count = instance.entries.count
            steps += [
                .popLast, .popToRoot, .popToInitialRoute, .dismiss, .close, .popPath, .popPushed, .popPushedToRoot,
            ]
            steps += instance.entries.map { .pop($0.id) }
            steps += (-1..<count).map { .popTo($0) }
            steps += (0...count).map { .popCount($0) }
            steps += Set(instance.entries.map(\.route)).sorted().map { .focusFirst($0) }
            let roots = app.registry.declaration(of: instance)?.routes.filter { $0.transition == .root } ?? []
            steps += roots.map { .setRoot($0.name) } + roots.map { .setRoot($0.name, keepStack: true) }
        case .tabs:
            let names = instance.tabs.map(\.route)
            steps += (1...max(1, names.count)).map { size in .setTabs(Array(names.shuffled(using: &rng).prefix(size))) }
        case .wrapper, nil:
            break
        }
        return steps
    }
}
