import Logging
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardUV

/// Applies navigation to the authoritative tree: runs chains and deep links through the plugins that own the nodes,
/// commits them as one revision each, sends the resulting notifications, and publishes every change.
///
/// - Important: Loop thread only.
/// What the navigator needs to know about the plugins, and nothing else: one seam instead of five closures, so a
/// test can stand in for the host's supervisors.
protocol PluginDirectory: AnyObject {
    /// The session of a ready plugin, if it is ready.
    func session(_ plugin: String) -> PluginSession?
    /// The session a chain's request goes to: at once if the plugin serves; after a wait (bounded by the request's
    /// deadline) if an upgrade holds it or it is lazy or hibernated and starts now (spec §20); else why not.
    /// `bypassHold`: the chain already consulted this version of the plugin, and finishes with it.
    func session(for plugin: String, bypassHold: Bool) async -> Result<PluginSession, ResponseError>
    /// Whether a plugin serves (for snapshots), and why not.
    func availability(of plugin: String) -> (status: InstanceSnapshot.Status, reason: String?)
    /// The plugins not serving, with why (for ``TreeChange``: O(plugins), taken at each change).
    var unavailablePlugins: [String: String?] { get }
    /// A plugin's current incarnation (bumped at every spawn): a chain that consulted an earlier one must not commit.
    func incarnation(of plugin: String) -> Int
    /// A plugin's `maxInstances` limit.
    func maxInstances(of plugin: String) -> Int
}

final class Navigator {
    var tree = NavigationTree() {
        didSet { treeEpoch &+= 1 }
    }
    /// Bumped at every change of ``tree``: what a cached walk of the tree (``SnapshotEncoder``) is keyed by.
    private(set) var treeEpoch = 0
    var registry = RouteRegistry()
    var composition: CompositionReport?
    private(set) var allocator = IDAllocator()
    let logger: Logger
    /// How the navigator sees the plugins (the host's supervisors); weak, as the host owns the navigator.
    weak var plugins: (any PluginDirectory)?
    /// Bounds on the data of a request, checked before anything is done with it.
    var requestLimits = RequestLimits.defaults
    private var observers: [Int: (HostEvent) -> Void] = [:]
    private var nextObserver = 0
    private static let maxConflictRetries = 3
    /// Incarnations, `maxInstances` reservations and per-plugin ordering of the chains in flight.
    var scheduler = ChainScheduler<CheckedContinuation<Void, Never>>()
    /// Plugins whose placeholders are being created, and whether to look again when that is done (the plugin came
    /// back meanwhile): never two creations of one placeholder at once.
    var creatingPlaceholders: [String: Bool] = [:]
    /// Plugins whose instances are being moved to a new version (spec §20.1): a chain that would change one of them
    /// commits after the switch. See Navigator+Lifecycle.swift.
    var freeze = FreezeState()
    /// The last revisions with what made each (`tree/history`).
    var history = RevisionHistory()

    init(logger: Logger) {
        self.logger = logger
    }

    // MARK: - Observers

    @discardableResult
    func observe(_ body: @escaping (HostEvent) -> Void) -> Int {
        nextObserver += 1
        observers[nextObserver] = body
        return nextObserver
    }

    func stopObserving(_ token: Int) { observers[token] = nil }

    /// Drops every observer (they may hold the host) once the loop has closed.
    func detach() { observers.removeAll() }

    func publish(_ event: HostEvent) {
        for observer in observers.values { observer(event) }
    }

    var snapshot: TreeSnapshot { tree.snapshot(availability: availability) }

    /// Whether each plugin serves, as snapshots show it.
    var availability: NavigationTree.Availability {
        { [weak self] plugin in
            self?.plugins?.availability(of: plugin) ?? (status: .unavailable, reason: "the host is stopping")
        }
    }

    /// Snapshots for the control socket, encoded from a per-instance cache; patches for watchers with deltas.
    let snapshotEncoder = SnapshotEncoder()

    /// `touched`: the instances a committed chain touched (all it changed), when this change is that one commit.
    func treeChanged(touched: Set<InstanceID>? = nil) {
        guard !observers.isEmpty else { return }
        publish(
            .treeChanged(
                TreeChange(
                    revision: tree.revision, tree: tree, unavailable: plugins?.unavailablePlugins ?? [:],
                    epoch: treeEpoch, touched: touched)))
    }

    // MARK: - Start-up

    /// Composes the ready plugins' route tables. Returns the report; the caller excludes what it names.
    func compose(
        tables: [(plugin: String, coordinators: [CoordinatorDeclaration])], declared: [String],
        root: CoordinatorReference?
    )
        -> CompositionReport
    {
        let rootKey = root.map { RouteRegistry.TypeKey(plugin: $0.plugin ?? "", type: $0.type) }
        let report = Composition.check(tables: tables, declaredPlugins: declared, root: rootKey)
        composition = report
        registry = report.registry
        // A fatal issue stops the start: whoever started the host reports it, once.
        for issue in report.issues where issue != report.fatal {
            switch issue.severity {
            case .error: logger.error("composition: \(issue)")
            case .warning: logger.warning("composition: \(issue)")
            }
        }
        return report
    }

    /// A plugin that did not serve when the app started serves now: its route table joins the composition. The
    /// app runs already, so the newcomer must fit it as it is: if the check would leave any plugin out (the
    /// newcomer's table is broken, or routes of the running plugins expect types it does not declare), the
    /// newcomer is refused and nothing changes. Returns why it was refused.
    func join(
        plugin: String, coordinators: [CoordinatorDeclaration], declared: [String], root: CoordinatorReference?
    ) -> ResponseError? {
        let tables =
            registry.plugins.map { (plugin: $0, coordinators: registry.coordinators(of: $0)) } + [
                (plugin: plugin, coordinators: coordinators)
            ]
        let rootKey = root.map { RouteRegistry.TypeKey(plugin: $0.plugin ?? "", type: $0.type) }
        let report = Composition.check(tables: tables, declaredPlugins: declared, root: rootKey)
        let errors = report.issues.filter { $0.severity == .error }
        guard errors.isEmpty else {
            let reasons = errors.map(\.description)
            for reason in reasons { logger.error("composition: \(reason)") }
            return ResponseError(
                .compositionError, "plugin '\(plugin)' cannot join the running app: \(reasons.joined(separator: "; "))",
                data: ["plugin": .string(plugin), "issues": .array(reasons.map(JSONValue.string))])
        }
        // The errors found at start stay (the plugins they left out are still out); the warnings are today's.
        let kept = composition?.issues.filter { $0.severity == .error } ?? []
        composition = CompositionReport(
            issues: kept + report.issues, excluded: composition?.excluded ?? [], registry: report.registry,
            fatal: composition?.fatal)
        registry = report.registry
        logger.notice("plugin '\(plugin)' joined the composition: \(coordinators.count) coordinator types")
        return nil
    }

    /// Takes a tree read from a state file as the authoritative tree (ids continue after its counters).
    func adopt(_ loaded: NavigationTree) {
        tree = loaded
        allocator = IDAllocator(continuing: loaded)
        logger.info("tree restored from the state file: \(loaded.count) instances, revision \(loaded.revision)")
        recordRevision(.restore, summary: "the tree read from the state file (\(loaded.count) instances)")
        treeChanged()
    }

    /// Creates the tree's root instance (and everything its initial content opens).
    func createRoot(_ root: CoordinatorReference) async throws(ResponseError) {
        let key = RouteRegistry.TypeKey(plugin: root.plugin ?? "", type: root.type)
        let base = tree
        let runner = ChainRunner.creatingRoot(tree: base, registry: registry, allocator: allocator, root: key)
        let (result, _) = try await runChain(runner, base: base).get()
        logger.info("tree created: \(tree.count) instances, revision \(tree.revision)")
        recordRevision(.start, summary: "the app started: \(key) and its initial content", touched: result.touched)
        treeChanged()
    }

    // MARK: - Navigation

    /// Runs a chain of steps from `start` (default: the root) as one atomic revision.
    func navigate(
        from start: InstanceID?, steps: [NavigationStep], requester: Requester, links: [Int: DeepLinkContext] = [:],
        reason: CoordinatorDismissedNotification.Reason = .navigation, note: ChangeNote? = nil
    ) async throws(ResponseError) -> NavigateRequest.Result {
        let request = ChainRequest(start: start, steps: steps, requester: requester, links: links, reason: reason)
        var prepared = try prepare(request, checkLimits: true)
        for attempt in 0... {
            let chain = scheduler.begin()
            let outcome = await driveAndCommit(prepared.runner, base: prepared.base, chain: chain)
            switch outcome {
            case .success(let (result, changed)):
                send(result.effects)
                if changed {
                    recordChain(
                        steps, requester: requester, links: links, reason: reason, note: note, touched: result.touched)
                    treeChanged(touched: result.touched)
                }
                finish(chain)
                return NavigateRequest.Result(revision: tree.revision, instance: result.landedOn)
            case .failure(let error) where error.code == .conflict && attempt < Self.maxConflictRetries:
                // Another chain changed what this one read: the same steps again on the new tree (their limits were
                // checked once).
                logger.debug("chain conflicted (\(error.message)); retrying")
                do throws(ResponseError) { prepared = try prepare(request, checkLimits: false) } catch {
                    finish(chain)
                    throw error
                }
                finish(chain)
            case .failure(let error):
                finish(chain)
                throw error
            }
        }
        throw ResponseError(.internalError, "unreachable")
    }

    /// What a navigation asks, kept to run it again when another chain changed what it read.
    private struct ChainRequest {
        let start: InstanceID?
        let steps: [NavigationStep]
        let requester: Requester
        let links: [Int: DeepLinkContext]
        let reason: CoordinatorDismissedNotification.Reason
    }

    /// Checks a navigation against the current tree and sets up its runner.
    private func prepare(
        _ request: ChainRequest, checkLimits: Bool
    ) throws(ResponseError) -> (runner: ChainRunner, base: NavigationTree) {
        guard let origin = request.start ?? tree.rootID else {
            throw ResponseError(.instanceNotFound, "the tree is empty")
        }
        guard !request.steps.isEmpty else {
            throw ResponseError(.invalidParams, "a chain needs at least one step", data: ["field": "steps"])
        }
        if checkLimits { try requestLimits.check(steps: request.steps) }
        if case .plugin(let plugin) = request.requester, let instance = tree[origin], instance.plugin != plugin,
            !tree.instances(of: plugin).contains(where: { tree.ancestors(of: $0.id).contains(origin) })
        {
            throw .notOwner(plugin, instance, "navigate from")
        }
        let base = tree
        let runner = ChainRunner(
            tree: base, registry: registry, allocator: allocator, requester: request.requester, start: origin,
            steps: request.steps,
            links: request.links, dismissReason: request.reason)
        return (runner, base)
    }

    /// Drives a chain through the plugins and commits it as one revision, in a chain of its own (see
    /// ``driveAndCommit(_:base:chain:)``).
    func runChain(
        _ runner: ChainRunner, base: NavigationTree
    ) async -> Result<(result: ChainResult, changed: Bool), ResponseError> {
        let chain = scheduler.begin()
        defer { finish(chain) }
        return await driveAndCommit(runner, base: base, chain: chain)
    }

    /// Drives a chain through the plugins and commits it as one revision. Whatever the chain made plugins create
    /// is destroyed again when it fails or its commit is refused (a plugin restarted meanwhile, a conflicting
    /// chain committed first), so a chain that does not land leaves nothing behind in any plugin. The caller
    /// finishes `chain` once it has acted on the outcome.
    private func driveAndCommit(
        _ runner: ChainRunner, base: NavigationTree, chain: ChainScheduler<CheckedContinuation<Void, Never>>.Chain
    ) async -> Result<(result: ChainResult, changed: Bool), ResponseError> {
        switch await drive(runner, chain: chain) {
        case .failure(let failure):
            destroy(failure.created.map { ($0.instance, $0.plugin, $0.type) })
            return .failure(failure.error)
        case .success(let result):
            if !freeze.plugins.isEmpty { await waitWhileFrozen(result, base: base) }
            do throws(ResponseError) {
                try checkIncarnations(chain)
                let changed = try tree.commit(result, startedFrom: base)
                tree.reserveIDs(from: allocator)
                return .success((result, changed))
            } catch {
                destroy(result.undo.map { ($0.instance, $0.plugin, $0.type) })
                return .failure(error)
            }
        }
    }

    /// Runs a chain runner to its end, asking the owning plugins every question it has.
    private func drive(
        _ runner: ChainRunner, chain: ChainScheduler<CheckedContinuation<Void, Never>>.Chain
    ) async -> Result<ChainResult, ChainFailure> {
        while true {
            switch runner.advance() {
            case .done(let result):
                return .success(result)
            case .failed(let failure):
                return .failure(failure)
            case .needs(let need):
                let reached =
                    await plugins?.session(
                        for: need.plugin, bypassHold: scheduler.hasConsulted(need.plugin, by: chain))
                    ?? .failure(.pluginUnavailable(need.plugin, "it is not running"))
                let session: PluginSession
                switch reached {
                case .success(let serving): session = serving
                case .failure(let error):
                    switch need {
                    case .route: runner.resume(with: .route(.failure(error)))
                    case .create: runner.resume(with: .create(.failure(error)))
                    }
                    continue
                }
                scheduler.consult(need.plugin, incarnation: plugins?.incarnation(of: need.plugin) ?? 0, by: chain)
                // A placeholder the plugin creates is counted already (it is in the tree).
                if case .create(let question) = need, question.reason == .new,
                    tree[question.instance]?.isPending != true
                {
                    let limit = plugins?.maxInstances(of: need.plugin) ?? .max
                    guard
                        scheduler.reserveCreation(
                            of: need.plugin, by: chain, owned: tree.instanceCount(of: need.plugin), limit: limit)
                    else {
                        let error = ResponseError(
                            .limitExceeded,
                            "plugin '\(need.plugin)' would own more than \(limit) instances (maxInstances)",
                            data: ["plugin": .string(need.plugin), "limit": "maxInstances"])
                        runner.resume(with: .create(.failure(error)))
                        continue
                    }
                }
                switch need {
                case .route(let question):
                    runner.resume(
                        with: .route(
                            await session.request(
                                encoding: CoordinatorRouteRequest.self, question.request,
                                reading: CoordinatorRouteRequest.Result.init(reading:),
                                readingBytes: CoordinatorRouteRequest.Result.init(resultBytes:maxDepth:))))
                case .create(let question):
                    runner.resume(
                        with: .create(
                            await session.request(
                                encoding: CoordinatorCreateRequest.self, question.request,
                                reading: CoordinatorCreateRequest.Result.init(reading:))))
                }
            }
        }
    }

    /// A chain whose answers came from a plugin process that has since died (and maybe restarted) must not
    /// commit: the new process never saw what the old one answered, and would not know the instances it created.
    private func checkIncarnations(
        _ chain: ChainScheduler<CheckedContinuation<Void, Never>>.Chain
    ) throws(ResponseError) {
        if let plugin = scheduler.restartedPlugin(of: chain, current: { self.plugins?.incarnation(of: $0) ?? 0 }) {
            throw .pluginUnavailable(plugin, "it restarted while the chain was running")
        }
    }

    /// A chain ended (committed, failed or about to be retried as a new chain): release what waited for it.
    private func finish(_ chain: ChainScheduler<CheckedContinuation<Void, Never>>.Chain) {
        for waiter in scheduler.finish(chain) { waiter.resume() }
    }

    /// Returns once every chain that has already consulted `plugin` has finished: a plugin's own request runs then.
    ///
    /// A plugin that answered a chain (its factory ran, its state moved) and then navigates or queries must see
    /// that chain's outcome, not the tree from before it: the Stinsen pattern "set state in the factory, navigate
    /// later from a timer" would otherwise act on a root the chain has not committed yet. Chains that never
    /// consulted the plugin do not delay it, so a slow plugin elsewhere holds nobody up. A plugin must not make a
    /// route answer wait for its own `navigate` (that would wait for the request timeout).
    func afterChainsConsulting(_ plugin: String) async {
        guard scheduler.isConsulted(plugin) else { return }
        await withCheckedContinuation { continuation in
            if let now = scheduler.whenChainsConsulting(plugin, finish: continuation) { now.resume() }
        }
    }
}
