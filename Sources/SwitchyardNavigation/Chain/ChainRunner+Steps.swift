import SwitchyardProtocol

// The step switch: one case per `NavigationStep.Op`, each applying fully to the working tree or throwing.
extension ChainRunner {
    func execute(_ step: NavigationStep, index: Int) throws(ResponseError) -> ChainNeed? {
        let current = try instance(cursor)
        func name(_ value: String?, _ field: String) throws(ResponseError) -> String {
            guard let value, !value.isEmpty else {
                throw ResponseError(
                    .invalidParams, "step \(index) (\(step.op.rawValue)) needs '\(field)'",
                    data: ["field": .string("steps[\(index)].\(field)")])
            }
            return value
        }
        switch step.op {
        case .route:
            try requireKind(current, .stack, operation: "route")
            let route = try name(step.route, "route")
            let declaration = try routeDeclaration(current, route)
            guard declaration.transition.isStackEntry else {
                throw .notAllowed(
                    current,
                    "route '\(route)' is a \(declaration.transition.rawValue) route, not one to push or present\(declaration.transition == .root ? " (use setRoot)" : "")",
                    route: route)
            }
            try authorize(current, "route", ancestorMayRequest: true)
            try validate(step.params, declaration, current)
            // Per-call presentation (§12.8): a transition the route allows, and options of this call.
            if let chosen = step.transition, !declaration.allows(chosen) {
                let allowed = ([declaration.transition] + (declaration.transitions ?? [])).map(\.rawValue)
                var data = ResponseError.context(current, route: route)
                data["field"] = .string("steps[\(index)].transition")
                throw ResponseError(
                    .invalidParams,
                    "\(ResponseError.describe(current)) route '\(route)' cannot be presented as \(chosen.rawValue) (allowed: \(allowed.joined(separator: ", ")))",
                    data: .object(data))
            }
            return ask(
                current, declaration, params: step.params, index: index,
                purpose: .push(step.presentation ?? declaration.presentation),
                transition: step.transition)

        case .setRoot:
            try requireKind(current, .stack, operation: "setRoot")
            let route = try name(step.route, "route")
            let declaration = try routeDeclaration(current, route)
            guard declaration.transition == .root else {
                throw .notAllowed(current, "route '\(route)' is not a root route", route: route)
            }
            try authorize(current, "setRoot", ancestorMayRequest: true)
            try validate(step.params, declaration, current)
            if let root = current.root, root.route == route, sameParams(root.params, step.params) {
                // Already the root with these params: nothing changes (Stinsen's root() contract).
                land(root.content.coordinator ?? current.id)
                return nil
            }
            return ask(
                current, declaration, params: step.params, index: index,
                purpose: .setRoot(keepStack: step.keepStack ?? false))

        case .hasRoot:
            try requireKind(current, .stack, operation: "hasRoot")
            let route = try name(step.route, "route")
            guard let root = current.root, root.route == route,
                step.params == nil || sameParams(root.params, step.params)
            else {
                throw .routeNotFound(current, route, "the root is '\(current.root?.route ?? "none")'")
            }
            land(root.content.coordinator ?? current.id)

        case .focusFirst:
            let route = try name(step.route, "route")
            switch current.kind {
            case .stack:
                guard
                    let position = current.entries.firstIndex(where: {
                        $0.route == route && (step.params == nil || sameParams($0.params, step.params))
                    })
                else {
                    throw .routeNotFound(current, route, "no entry of it in the stack")
                }
                try authorize(current, "focusFirst")
                let target = current.entries[position].content.coordinator ?? current.id
                try removeEntries(of: current.id, from: position + 1)
                land(target)
            case .tabs:
                try selectTab(current, route)
            case .wrapper, nil:
                throw .notAllowed(current, "focusFirst works on stack and tabs coordinators", route: route)
            }

        case .selectTab:
            try requireKind(current, .tabs, operation: "selectTab")
            try selectTab(current, try name(step.tab ?? step.route, "tab"))

        case .popLast:
            try requireKind(current, .stack, operation: "popLast")
            try authorize(current, "popLast")
            guard !current.entries.isEmpty else {
                throw .notAllowed(current, "nothing to pop: the stack is at its root")
            }
            try removeEntries(of: current.id, from: current.entries.count - 1)
            land(current.id)

        case .pop:
            try requireKind(current, .stack, operation: "pop")
            try authorize(current, "pop")
            guard let entry = step.entry else { _ = try name(nil, "entry"); return nil }
            if current.root?.id == entry {
                throw .notAllowed(
                    current,
                    "entry \(entry) is its root, and a root cannot be popped or dismissed (replace it with setRoot, or remove the coordinator with dismissCoordinator)",
                    entry: entry)
            }
            guard let position = current.entries.firstIndex(where: { $0.id == entry }) else {
                throw .entryNotFound(current, entry)
            }
            // The user cannot swipe away what is presented with interactive dismissal disabled (§12.8), nor anything
            // whose removal would take it: what lies under it in its stack, or an entry holding a flow that shows it.
            if dismissReason == .user,
                let (owner, locked) = tree.lockedEntry(removing: current.entries[position...], of: current)
            {
                let under =
                    locked.id == entry
                    ? ""
                    : ", nor entry \(entry)\(owner.id == current.id ? "" : " of \(ResponseError.describe(current))"), whose removal would take it"
                throw .notAllowed(
                    owner,
                    "entry \(locked.id) ('\(locked.route)') is presented with interactiveDismissDisabled: the user cannot dismiss it\(under)",
                    entry: locked.id)
            }
            try removeEntries(of: current.id, from: position)
            land(current.id)

        case .popTo:
            try requireKind(current, .stack, operation: "popTo")
            try authorize(current, "popTo")
            guard let target = step.index else { _ = try name(nil, "index"); return nil }
            guard target >= -1 && target < current.entries.count else {
                throw .notAllowed(
                    current, "popTo index \(target) is out of range (-1 ... \(current.entries.count - 1))")
            }
            try removeEntries(of: current.id, from: target + 1)
            land(current.id)

        case .popCount:
            try requireKind(current, .stack, operation: "popCount")
            try authorize(current, "popCount")
            guard let count = step.count else { _ = try name(nil, "count"); return nil }
            guard count >= 1 && count <= current.entries.count else {
                throw .notAllowed(
                    current, "cannot pop \(count) entries: the stack holds \(current.entries.count) above its root")
            }
            try removeEntries(of: current.id, from: current.entries.count - count)
            land(current.id)

        case .popToRoot:
            try requireKind(current, .stack, operation: "popToRoot")
            try authorize(current, "popToRoot")
            try removeEntries(of: current.id, from: 0)
            land(current.id)

        case .popToInitialRoute:
            try requireKind(current, .stack, operation: "popToInitialRoute")
            try authorize(current, "popToInitialRoute")
            // Its own entries go, and whatever the stacks it was pushed onto show above it, up to a tab boundary.
            // What an outer stack shows above the flow is shown above everything inside it, so the outermost stack's
            // entries are removed (and reported) first: §12.1's top first, across the coordinators.
            var removals = [(stack: current.id, from: 0)]
            var node = current
            while let link = node.parent {
                let parent = try instance(link.instance)
                if parent.kind == .tabs { break }
                if parent.kind == .stack {
                    try authorize(parent, "popToInitialRoute")
                    // Above the entry holding the flow; everything above its root when the flow is the root's.
                    let position = parent.entries.firstIndex { $0.id == link.entry }.map { $0 + 1 } ?? 0
                    removals.append((parent.id, position))
                }
                node = parent
            }
            for removal in removals.reversed() { try removeEntries(of: removal.stack, from: removal.from) }
            land(current.id)

        case .dismiss:
            try requireKind(current, .stack, operation: "dismiss")
            try authorize(current, "dismiss")
            guard let position = current.entries.lastIndex(where: { $0.transition.isModal }) else {
                throw .notAllowed(current, "no modal to dismiss")
            }
            try removeEntries(of: current.id, from: position)
            land(current.id)

        case .close:
            try requireKind(current, .stack, operation: "close")
            try authorize(current, "close")
            if let position = current.entries.lastIndex(where: { $0.transition.isModal }) {
                try removeEntries(of: current.id, from: position)
            } else if !current.entries.isEmpty {
                try removeEntries(of: current.id, from: current.entries.count - 1)
            } else {
                throw .notAllowed(current, "nothing to close: no modal and no pushed entry")
            }
            land(current.id)

        case .dismissCoordinator:
            try authorize(current, "dismissCoordinator")
            land(try dismiss(current, finishingFlow: false))

        case .finishFlow:
            try authorize(current, "finishFlow")
            land(try dismiss(current, finishingFlow: true))

        case .restart:
            try authorize(current, "restart")
            discard(current.allEntries.reversed(), of: current)
            var reset = current
            reset.root = nil
            reset.entries = []
            reset.tabs = []
            reset.selectedTab = 0
            reset.child = nil
            put(reset)
            let parent = current.parent.flatMap { link -> CoordinatorCreateRequest.Parent? in
                guard let owner = tree[link.instance], let entry = owner.entry(link.entry) else { return nil }
                return CoordinatorCreateRequest.Parent(instance: owner.id, plugin: owner.plugin, route: entry.route)
            }
            creations.append(
                CreateQuestion(
                    instance: current.id, plugin: current.plugin, type: current.type, reason: .restart,
                    params: current.params, parent: parent, state: current.state))
            pendingLanding = current.id

        case .child:
            let entry: Entry? =
                switch current.kind {
                case .wrapper, nil: current.child
                case .tabs: current.selectedTabEntry
                case .stack: current.root
                }
            guard let child = entry?.content.coordinator else {
                throw .notAllowed(
                    current,
                    "its \(current.kind == .tabs ? "selected tab" : current.kind == .stack ? "root" : "child") shows a screen, not a coordinator"
                )
            }
            land(child)

        case .parent:
            guard let parent = current.parent?.instance else {
                throw .notAllowed(current, "the tree's root has no parent")
            }
            land(parent)

        case .top:
            land(tree.topCoordinator(from: current.id))

        case .setTabs:
            try requireKind(current, .tabs, operation: "setTabs")
            try authorize(current, "setTabs")
            return try setTabs(current, step.tabs, index: index)

        case .popPath:
            try requireKind(current, .stack, operation: "popPath")
            try popPath(current)

        case .popPushed, .popPushedToRoot:
            try requireKind(current, .stack, operation: step.op.rawValue)
            try authorize(current, step.op.rawValue)
            try popPushed(current, all: step.op == .popPushedToRoot)

        case .forcePresent:
            try requireKind(current, .stack, operation: "forcePresent")
            return try forcePresent(current, step, route: try name(step.route, "route"), index: index)

        case .refresh:
            return try refresh(current, step, index: index)

        case .setBadge:
            try requireKind(current, .tabs, operation: "setBadge")
            // The tabs' owner, or a plugin whose flow a tab shows (it knows what to count), like selectTab.
            try authorize(current, "setBadge", ancestorMayRequest: true)
            try setBadge(current, try name(step.tab, "tab"), step.badge)
        }
        return nil
    }
}
