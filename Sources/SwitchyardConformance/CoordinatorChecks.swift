import SwitchyardNavigation
import SwitchyardProtocol

extension MainSession {
    /// §8, §12.1, §13: every coordinator type created as a tree's root, every declared route taken with params
    /// generated from its declaration, every route's params broken once, every deep-link pattern followed.
    func checkCoordinators(_ model: HostModel) {
        var counts = Counts()
        for declaration in model.coordinators {
            if let reason = session.unusable {
                ledger.skip([.create, .route, .paramTypes, .deepLink], "not run: \(reason)")
                break
            }
            guard var tree = create(declaration, model: model, counts: &counts) else { continue }
            route(declaration, tree: &tree, model: model, counts: &counts)
            breakParams(declaration, tree: tree, counts: &counts)
            followLinks(declaration, tree: &tree, model: model, counts: &counts)
            trees.append((declaration.type, tree))
        }
        ledger.note(.create, "\(counts.created) of \(model.coordinators.count) type(s) created")
        // Nothing counted because the plugin stopped answering is said so, not taken for an absence of routes.
        let stopped = session.unusable.map { "not run: \($0)" }
        if counts.routes == 0 {
            ledger.skip(
                .route,
                stopped
                    ?? "no route is taken with coordinator/route (only tabs and wrapper children, created with their coordinator)"
            )
        } else {
            ledger.note(
                .route,
                "\(counts.routes) route(s): \(counts.answered) answered, \(counts.guarded) refused by a guard (-32013)")
        }
        if counts.typedRoutes == 0 {
            ledger.skip(.paramTypes, stopped ?? "no route declares a param of a checkable type")
        } else {
            ledger.note(
                .paramTypes,
                "\(counts.typedRefused) of \(counts.typedRoutes) route(s) refused a wrong-typed param with -32602 naming it"
            )
        }
        if counts.links == 0 {
            ledger.skip(
                .deepLink,
                stopped
                    ?? (counts.passThrough > 0
                        ? "only \"\" patterns (they consume nothing)" : "no route declares a deep-link pattern"))
        } else {
            var note =
                "\(counts.links) link(s) followed: \(counts.linksTaken) taken, \(counts.linksRefused) refused by the plugin"
            if counts.passThrough > 0 {
                note += "; \(counts.passThrough) \"\" pattern(s) consume nothing and were not followed"
            }
            ledger.note(.deepLink, note)
        }
    }

    struct Counts {
        var created = 0, routes = 0, answered = 0, guarded = 0
        var typedRoutes = 0, typedRefused = 0
        var links = 0, linksTaken = 0, linksRefused = 0, passThrough = 0
    }

    /// `coordinator/create` (reason `new`) of `declaration` as the root of a fresh tree.
    private func create(
        _ declaration: CoordinatorDeclaration, model: HostModel, counts: inout Counts
    ) -> NavigationTree? {
        let mark = session.mark
        let base = NavigationTree()
        let runner = ChainRunner.creatingRoot(
            tree: base, registry: model.registry, allocator: model.allocator,
            root: RouteRegistry.TypeKey(plugin: model.plugin, type: declaration.type))
        let outcome = session.drive(runner, model: model, timings: &timings)
        let expected = "content that fits the declaration: " + Self.expectedContent(declaration)
        switch outcome {
        case .done(let result):
            var tree = base
            do { try tree.commit(result, startedFrom: base) } catch {
                record.fail(.create, "\(declaration.type): \(error.message)", expected: expected, since: mark)
                return nil
            }
            counts.created += 1
            return tree
        case .refused(let error, let method, let created):
            let what = "coordinator/create of \(declaration.type) (no params, as the tree's root)"
            if error.code == .invalidParams && method == CoordinatorCreateRequest.method {
                record.warn(
                    .create, "\(what) was refused with -32602: \(error.message)",
                    expected:
                        "\(expected); a type that needs creation params cannot be a root, and its route table cannot say so (§5)",
                    since: mark)
            } else {
                record.fail(
                    .create,
                    "\(what): \(method) was answered with the error \(error.code.rawValue) \(error.code.name): \(error.message)",
                    expected: expected, since: mark)
            }
            destroyCreated(created, model: model)
        case .invalidAnswer(let error, _, let created):
            record.fail(
                .create, "coordinator/create of \(declaration.type): the host refuses the answer: \(error.message)",
                expected: expected, since: mark)
            destroyCreated(created, model: model)
        case .noAnswer(let reply, let method):
            record.noAnswer(.create, "\(method) for \(declaration.type)", reply, since: mark)
        }
        return nil
    }

    static func expectedContent(_ declaration: CoordinatorDeclaration) -> String {
        switch declaration.kind {
        case .stack:
            "a stack's root {route, content} whose route is a declared root route (initialRoute \(declaration.initialRoute ?? "?"))"
        case .tabs:
            "a tabs coordinator's tabs: declared tabs, each once (\(declaration.routes.filter { $0.transition == .tab }.map(\.name)))"
        case .wrapper: "a wrapper's child content"
        }
    }

    /// Every route of the type, one chain each on the type's tree, committed as the host would.
    private func route(
        _ declaration: CoordinatorDeclaration, tree: inout NavigationTree, model: HostModel, counts: inout Counts
    ) {
        guard let root = tree.rootID else { return }
        for route in declaration.routes {
            let step: NavigationStep
            switch route.transition {
            case .push, .modal, .fullScreen: step = .route(route.name, Values.params(for: route))
            case .root: step = .setRoot(route.name, Values.params(for: route))
            case .tab:
                // A tab the instance was created without (dynamic tabs, §12.7) joins with setTabs, asking the owner.
                let shown = tree[root]?.tabs.map(\.route) ?? []
                step = shown.contains(route.name) ? .selectTab(route.name) : .setTabs(shown + [route.name])
            case .child: continue
            }
            guard session.unusable == nil else { return }
            let taken = run(
                ChainRunner(
                    tree: tree, registry: model.registry, allocator: model.allocator, start: root, steps: [step]),
                on: &tree, check: .route, what: "route '\(route.name)' of \(declaration.type)", model: model,
                expected: Self.expectedAnswer(route, plugin: model.plugin))
            guard route.transition != .tab else { continue }
            counts.routes += 1
            switch taken {
            case .taken: counts.answered += 1
            case .guarded: counts.guarded += 1
            case .failed: break
            }
        }
    }

    static func expectedAnswer(_ route: RouteDeclaration, plugin: String) -> String {
        if let target = RouteRegistry.target(of: route, declaredBy: plugin) {
            return
                "{content: {coordinator: {type: \(target.type)\(target.plugin == plugin ? "" : ", plugin: \(target.plugin)")}}} (the route declares target \(target)), or -32013 from a guard"
        }
        return "{content: {screen: {name, props?}}} (the route declares no target), or -32013 from a guard"
    }

    enum Taken { case taken, guarded, failed }

    /// Drives one chain, commits it, sends its effects, and reports what went wrong under `check`.
    func run(
        _ runner: ChainRunner, on tree: inout NavigationTree, check: CheckID, what: String, model: HostModel,
        expected: String
    ) -> Taken {
        let mark = session.mark
        let base = tree
        switch session.drive(runner, model: model, timings: &timings) {
        case .done(let result):
            do { try tree.commit(result, startedFrom: base) } catch {
                record.fail(check, "\(what): \(error.message)", expected: expected, since: mark)
                return .failed
            }
            destroyed += session.apply(result.effects, model: model)
            return .taken
        case .refused(let error, let method, let created):
            destroyCreated(created, model: model)
            if error.code == .rejectedByGuard && method == CoordinatorRouteRequest.method { return .guarded }
            record.fail(
                check,
                "\(what): \(method) was answered with the error \(error.code.rawValue) \(error.code.name): \(error.message)",
                expected: expected, since: mark)
        case .invalidAnswer(let error, let method, let created):
            destroyCreated(created, model: model)
            record.fail(
                check, "\(what): the host refuses the answer to \(method): \(error.message)", expected: expected,
                since: mark)
        case .noAnswer(let reply, let method):
            record.noAnswer(check, "\(what): \(method)", reply, since: mark)
        }
        return .failed
    }

    /// What a failed chain created in the plugin is destroyed again (§12), as the host does.
    func destroyCreated(_ created: [(instance: InstanceID, plugin: String, type: String)], model: HostModel) {
        for (instance, plugin, type) in created.reversed() where plugin == model.plugin && session.unusable == nil {
            destroyed.append(session.destroy(instance, type: type))
        }
    }

    /// §7: each route with a typed param, asked directly (the host would refuse these params itself, §12.1) with the
    /// first such param of the wrong type.
    private func breakParams(_ declaration: CoordinatorDeclaration, tree: NavigationTree, counts: inout Counts) {
        guard ledger.wants(.paramTypes), let root = tree.rootID else { return }
        for route in declaration.routes where route.transition.isStackEntry || route.transition == .root {
            guard let parameter = route.params?.first(where: { $0.type != .any }),
                let params = Values.wrongParams(for: route, breaking: parameter), session.unusable == nil
            else { continue }
            counts.typedRoutes += 1
            let mark = session.mark
            let request = CoordinatorRouteRequest.Params(
                instance: root, type: declaration.type, route: route.name, transition: route.transition, params: params)
            guard let encoded = try? Coding.encode(request) else { continue }
            let reply = session.request(CoordinatorRouteRequest.method, encoded)
            let what =
                "route '\(route.name)' of \(declaration.type) with param '\(parameter.name)' (\(parameter.type.rawValue)) = \(JSONWriter.string(params["\(parameter.name)"] ?? .null))"
            let expected =
                "-32602 invalidParams with data.field naming '\(parameter.name)' (§7). The host checks declared params before it asks (§12.1), so the spec does not require this of a plugin: a WARN, not a FAIL"
            switch reply {
            case .error(let error)
            where error.code == .invalidParams && (error.data?.namesField(parameter.name) ?? false):
                counts.typedRefused += 1
            case .error(let error) where error.code == .invalidParams:
                record.warn(
                    .paramTypes,
                    "\(what): -32602 without data.field naming the param (data: \(error.data.map(JSONWriter.string) ?? "none"))",
                    expected: expected, since: mark)
            case .error(let error):
                record.warn(
                    .paramTypes,
                    "\(what) was answered with \(error.code.rawValue) \(error.code.name): \(error.message)",
                    expected: expected, since: mark)
            case .result:
                record.warn(.paramTypes, "\(what) was accepted", expected: expected, since: mark)
            case .timeout, .ended:
                record.noAnswer(.paramTypes, what, reply, since: mark)
            }
        }
    }

    /// §13: a link from each pattern, resolved from the type's instance and applied through the plugin.
    private func followLinks(
        _ declaration: CoordinatorDeclaration, tree: inout NavigationTree, model: HostModel, counts: inout Counts
    ) {
        guard ledger.wants(.deepLink) else { return }
        for route in declaration.routes where session.unusable == nil {
            let link: DeepLinkURL
            let pattern: String
            if declaration.customDeepLinks == true {
                // The plugin resolves these links itself (coordinator/deepLink): offer each route's name.
                guard let custom = try? DeepLinkURL(parsing: Values.percentEncoded(route.name)) else { continue }
                (link, pattern) = (custom, "resolved by the plugin")
            } else {
                guard let text = route.deepLink, let parsed = try? PathPattern(parsing: text) else { continue }
                guard let generated = Values.link(for: route, pattern: parsed) else {
                    counts.passThrough += 1
                    continue
                }
                (link, pattern) = (generated, "pattern \(parsed)")
            }
            counts.links += 1
            let mark = session.mark
            let what = "deep link '\(link.url)' (route '\(route.name)' of \(declaration.type), \(pattern))"
            let expected =
                "the link resolves (§13: its own pattern matches it) and each hop's answer fits the route, or a guard's -32013"
            switch session.resolve(link, tree: tree, model: model) {
            case .failure(.plugin(let error)) where error.code == .deepLinkInvalid:
                counts.linksRefused += 1
            case .failure(.plugin(let error)):
                record.fail(
                    .deepLink,
                    "\(what): coordinator/deepLink was answered with \(error.code.rawValue) \(error.code.name): \(error.message)",
                    expected: "{route, params?, consumed}, or -32014 to refuse the link (§8 coordinator/deepLink)",
                    since: mark)
            case .failure(.host(let error)):
                record.fail(.deepLink, "\(what) does not resolve: \(error.message)", expected: expected, since: mark)
            case .failure(.none(let reply)):
                record.noAnswer(.deepLink, "\(what): coordinator/deepLink", reply, since: mark)
            case .success(let plan):
                let runner = ChainRunner(
                    tree: tree, registry: model.registry, allocator: model.allocator, start: plan.start,
                    steps: plan.steps, links: plan.links)
                switch run(runner, on: &tree, check: .deepLink, what: what, model: model, expected: expected) {
                case .taken: counts.linksTaken += 1
                case .guarded: counts.linksRefused += 1
                case .failed: break
                }
            }
        }
    }
}
