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
    /// The connection of a ready plugin, if it is ready.
    func connection(_ plugin: String) -> PluginConnection?
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
    private(set) var tree = NavigationTree() {
        didSet { treeEpoch &+= 1 }
    }
    /// Bumped at every change of ``tree``: what a cached walk of the tree (``SnapshotEncoder``) is keyed by.
    private(set) var treeEpoch = 0
    private(set) var registry = RouteRegistry()
    private(set) var composition: CompositionReport?
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
    private var scheduler = ChainScheduler<() -> Void>()
    /// The actor the loop runs in. Chains and deep links run as tasks isolated to it, so each question to a plugin
    /// reads as an `await` and the compiler keeps the flow on the loop. Set by the host once the actor exists.
    weak var isolation: HostIsolation?
    /// Flows waiting for their task, by number. The task is started from `nonisolated` code (a libuv callback's), so
    /// it must not capture the host's objects: it takes them from here once it runs isolated to the loop's actor.
    private var startingFlows: [Int: nonisolated(nonsending) () async -> Void] = [:]
    private var nextFlow = 0
    /// Plugins whose placeholders are being created, and whether to look again when that is done (the plugin came
    /// back meanwhile): never two creations of one placeholder at once.
    var creatingPlaceholders: [String: Bool] = [:]

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

    func publish(_ event: HostEvent) {
        for observer in observers.values { observer(event) }
    }

    var snapshot: TreeSnapshot { tree.snapshot(availability: availability) }

    /// Whether each plugin serves, as snapshots show it.
    var availability: NavigationTree.Availability {
        { [weak self] plugin in self?.plugins?.availability(of: plugin) ?? (status: .unavailable, reason: "the host is stopping") }
    }

    /// Snapshots for the control socket, encoded from a per-instance cache; patches for watchers with deltas.
    let snapshotEncoder = SnapshotEncoder()

    /// `touched`: the instances a committed chain touched (all it changed), when this change is that one commit.
    func treeChanged(touched: Set<InstanceID>? = nil) {
        guard !observers.isEmpty else { return }
        publish(.treeChanged(TreeChange(
            revision: tree.revision, tree: tree, unavailable: plugins?.unavailablePlugins ?? [:], epoch: treeEpoch, touched: touched)))
    }

    // MARK: - Start-up

    /// Composes the ready plugins' route tables. Returns the report; the caller excludes what it names.
    func compose(tables: [(plugin: String, coordinators: [CoordinatorDeclaration])], declared: [String], root: CoordinatorReference?)
        -> CompositionReport
    {
        let rootKey = root.map { RouteRegistry.TypeKey(plugin: $0.plugin ?? "", type: $0.type) }
        let report = Composition.check(tables: tables, declaredPlugins: declared, root: rootKey)
        composition = report
        registry = report.registry
        for issue in report.issues {
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
    func join(plugin: String, coordinators: [CoordinatorDeclaration], declared: [String], root: CoordinatorReference?) -> ResponseError? {
        let tables = registry.plugins.map { (plugin: $0, coordinators: registry.coordinators(of: $0)) } + [(plugin: plugin, coordinators: coordinators)]
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
            issues: kept + report.issues, excluded: composition?.excluded ?? [], registry: report.registry, fatal: composition?.fatal)
        registry = report.registry
        logger.notice("plugin '\(plugin)' joined the composition: \(coordinators.count) coordinator types")
        return nil
    }

    /// Takes a tree read from a state file as the authoritative tree (ids continue after its counters).
    func adopt(_ loaded: NavigationTree) {
        tree = loaded
        allocator = IDAllocator(continuing: loaded)
        logger.info("tree restored from the state file: \(loaded.count) instances, revision \(loaded.revision)")
        treeChanged()
    }

    /// Creates the tree's root instance (and everything its initial content opens).
    func createRoot(_ root: CoordinatorReference, _ completion: @escaping (Result<Void, ResponseError>) -> Void) {
        let key = RouteRegistry.TypeKey(plugin: root.plugin ?? "", type: root.type)
        let base = tree
        let runner = ChainRunner.creatingRoot(tree: base, registry: registry, allocator: allocator, root: key)
        runChain(runner, base: base) { [weak self] outcome in
            guard let self else { return }
            switch outcome {
            case .failure(let error):
                completion(.failure(error))
            case .success:
                self.logger.info("tree created: \(self.tree.count) instances, revision \(self.tree.revision)")
                self.treeChanged()
                completion(.success(()))
            }
        }
    }

    // MARK: - Navigation

    /// Runs a chain of steps from `start` (default: the root) as one atomic revision.
    func navigate(
        from start: InstanceID?, steps: [NavigationStep], requester: Requester, links: [Int: DeepLinkContext] = [:],
        reason: CoordinatorDismissedNotification.Reason = .navigation,
        _ completion: @escaping (Result<NavigateRequest.Result, ResponseError>) -> Void
    ) {
        let request = ChainRequest(start: start, steps: steps, requester: requester, links: links, reason: reason)
        let prepared: (runner: ChainRunner, base: NavigationTree)
        switch prepare(request, checkLimits: true) {
        case .failure(let error): return completion(.failure(error))
        case .success(let success): prepared = success
        }
        // Registered now, not when the task runs: a plugin request that arrives meanwhile already waits for it.
        let chain = scheduler.begin()
        startFlow {
            await self.apply(request, prepared, chain: chain, completion)
        } stopped: {
            self.finish(chain)
            completion(.failure(ResponseError(.internalError, "the host is stopping")))
        }
    }

    /// ``navigate(from:steps:requester:links:reason:_:)`` from a flow already running on the loop (a resolved deep
    /// link, an answered action): the chain runs on in that flow instead of waiting for a task of its own.
    nonisolated(nonsending) func navigating(
        from start: InstanceID?, steps: [NavigationStep], requester: Requester, links: [Int: DeepLinkContext] = [:],
        _ completion: @escaping (Result<NavigateRequest.Result, ResponseError>) -> Void
    ) async {
        let request = ChainRequest(start: start, steps: steps, requester: requester, links: links, reason: .navigation)
        switch prepare(request, checkLimits: true) {
        case .failure(let error): completion(.failure(error))
        case .success(let prepared): await apply(request, prepared, chain: scheduler.begin(), completion)
        }
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
    private func prepare(_ request: ChainRequest, checkLimits: Bool) -> Result<(runner: ChainRunner, base: NavigationTree), ResponseError> {
        guard let origin = request.start ?? tree.rootID else {
            return .failure(ResponseError(.instanceNotFound, "the tree is empty"))
        }
        guard !request.steps.isEmpty else {
            return .failure(ResponseError(.invalidParams, "a chain needs at least one step", data: ["field": "steps"]))
        }
        if checkLimits {
            do throws(ResponseError) { try requestLimits.check(steps: request.steps) } catch { return .failure(error) }
        }
        if case .plugin(let plugin) = request.requester, let instance = tree[origin], instance.plugin != plugin,
            !tree.instances(of: plugin).contains(where: { tree.ancestors(of: $0.id).contains(origin) })
        {
            return .failure(.notOwner(plugin, instance, "navigate from"))
        }
        let base = tree
        let runner = ChainRunner(
            tree: base, registry: registry, allocator: allocator, requester: request.requester, start: origin, steps: request.steps,
            links: request.links, dismissReason: request.reason)
        return .success((runner, base))
    }

    /// Drives a prepared navigation to its commit, sends its notifications and answers; a chain that conflicted
    /// with another runs again on the new tree (the same steps: their limits were checked once).
    nonisolated(nonsending) private func apply(
        _ request: ChainRequest, _ prepared: (runner: ChainRunner, base: NavigationTree), chain: ChainScheduler<() -> Void>.Chain,
        _ completion: @escaping (Result<NavigateRequest.Result, ResponseError>) -> Void
    ) async {
        var (prepared, chain) = (prepared, chain)
        for attempt in 0... {
            switch await driveAndCommit(prepared.runner, base: prepared.base, chain: chain) {
            case .success(let (result, changed)):
                send(result.effects)
                if changed { treeChanged(touched: result.touched) }
                completion(.success(NavigateRequest.Result(revision: tree.revision, instance: result.landedOn)))
                return finish(chain)
            case .failure(let error) where error.code == .conflict && attempt < Self.maxConflictRetries:
                logger.debug("chain conflicted (\(error.message)); retrying")
                switch prepare(request, checkLimits: false) {
                case .failure(let error):
                    completion(.failure(error))
                    return finish(chain)
                case .success(let next):
                    let conflicted = chain
                    (prepared, chain) = (next, scheduler.begin())
                    finish(conflicted)
                }
            case .failure(let error):
                completion(.failure(error))
                return finish(chain)
            }
        }
    }

    /// Drives a chain through the plugins and commits it as one revision. Whatever the chain made plugins create
    /// is destroyed again when it fails or its commit is refused (a plugin restarted meanwhile, a conflicting
    /// chain committed first), so a chain that does not land leaves nothing behind in any plugin.
    func runChain(
        _ runner: ChainRunner, base: NavigationTree,
        _ completion: @escaping (Result<(result: ChainResult, changed: Bool), ResponseError>) -> Void
    ) {
        // Registered now, not when the task runs: a plugin request that arrives meanwhile already waits for it.
        let chain = scheduler.begin()
        startFlow {
            completion(await self.driveAndCommit(runner, base: base, chain: chain))
            self.finish(chain)
        } stopped: {
            self.finish(chain)
            completion(.failure(ResponseError(.internalError, "the host is stopping")))
        }
    }

    /// ``runChain(_:base:_:)``'s work, in the flow that runs it; the caller finishes the chain once it has acted on
    /// the outcome.
    nonisolated(nonsending) private func driveAndCommit(
        _ runner: ChainRunner, base: NavigationTree, chain: ChainScheduler<() -> Void>.Chain
    ) async -> Result<(result: ChainResult, changed: Bool), ResponseError> {
        switch await drive(runner, chain: chain) {
        case .failure(let failure):
            destroy(failure.created.map { ($0.instance, $0.plugin, $0.type) })
            return .failure(failure.error)
        case .success(let result):
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

    /// Runs `flow` as a task isolated to the loop's actor. The task captures only the actor and a number; the flow
    /// (which holds the host's objects) waits in ``startingFlows`` until the task, on the loop, takes it.
    func startFlow(_ flow: nonisolated(nonsending) @escaping () async -> Void, stopped: () -> Void) {
        guard let isolation else {
            stopped()
            return
        }
        let number = nextFlow
        nextFlow += 1
        startingFlows[number] = flow
        // Preferring the loop as task executor: the task never waits for Swift's global pool, which tests (and an
        // embedding app) may have busy with blocking calls; a flow stuck there stalled navigation for 30 s.
        Task(executorPreference: isolation.taskExecutor) { await isolation.runFlow(number) }
    }

    /// Called by the task ``startFlow(_:stopped:)`` started, on the loop.
    func runFlow(_ number: Int, isolation: isolated HostIsolation) async {
        guard let flow = startingFlows.removeValue(forKey: number) else { return }
        await flow()
    }

    /// Runs a chain runner to its end, asking the owning plugins every question it has.
    nonisolated(nonsending) private func drive(
        _ runner: ChainRunner, chain: ChainScheduler<() -> Void>.Chain
    ) async -> Result<ChainResult, ChainFailure> {
        while true {
            switch runner.advance() {
            case .done(let result):
                return .success(result)
            case .failed(let failure):
                return .failure(failure)
            case .needs(let need):
                guard let connection = plugins?.connection(need.plugin) else {
                    let error = ResponseError.pluginUnavailable(need.plugin, "it is not running")
                    switch need {
                    case .route: runner.resume(with: .route(.failure(error)))
                    case .create: runner.resume(with: .create(.failure(error)))
                    }
                    continue
                }
                scheduler.consult(need.plugin, incarnation: plugins?.incarnation(of: need.plugin) ?? 0, by: chain)
                // A placeholder the plugin creates is counted already (it is in the tree).
                if case .create(let question) = need, question.reason == .new, tree[question.instance]?.isPending != true {
                    let limit = plugins?.maxInstances(of: need.plugin) ?? .max
                    guard scheduler.reserveCreation(of: need.plugin, by: chain, owned: tree.instanceCount(of: need.plugin), limit: limit) else {
                        let error = ResponseError(
                            .limitExceeded, "plugin '\(need.plugin)' would own more than \(limit) instances (maxInstances)",
                            data: ["plugin": .string(need.plugin), "limit": "maxInstances"])
                        runner.resume(with: .create(.failure(error)))
                        continue
                    }
                }
                switch need {
                case .route(let question):
                    runner.resume(with: .route(await connection.request(
                        encoding: CoordinatorRouteRequest.self, question.request, reading: CoordinatorRouteRequest.Result.init(reading:))))
                case .create(let question):
                    runner.resume(with: .create(await connection.request(
                        encoding: CoordinatorCreateRequest.self, question.request, reading: CoordinatorCreateRequest.Result.init(reading:))))
                }
            }
        }
    }

    /// A chain whose answers came from a plugin process that has since died (and maybe restarted) must not
    /// commit: the new process never saw what the old one answered, and would not know the instances it created.
    private func checkIncarnations(_ chain: ChainScheduler<() -> Void>.Chain) throws(ResponseError) {
        if let plugin = scheduler.restartedPlugin(of: chain, current: { self.plugins?.incarnation(of: $0) ?? 0 }) {
            throw .pluginUnavailable(plugin, "it restarted while the chain was running")
        }
    }

    /// A chain ended (committed, failed or about to be retried as a new chain): release what waited for it.
    private func finish(_ chain: ChainScheduler<() -> Void>.Chain) {
        for run in scheduler.finish(chain) { run() }
    }

    /// Runs a plugin's request once every chain that has already consulted the plugin has finished.
    ///
    /// A plugin that answered a chain (its factory ran, its state moved) and then navigates or queries must see
    /// that chain's outcome, not the tree from before it: the Stinsen pattern "set state in the factory, navigate
    /// later from a timer" would otherwise act on a root the chain has not committed yet. Chains that never
    /// consulted the plugin do not delay it, so a slow plugin elsewhere holds nobody up. A plugin must not make a
    /// route answer wait for its own `navigate` (that would wait for the request timeout).
    func afterChainsConsulting(_ plugin: String, _ run: @escaping () -> Void) {
        scheduler.whenChainsConsulting(plugin, finish: run)?()
    }
}
