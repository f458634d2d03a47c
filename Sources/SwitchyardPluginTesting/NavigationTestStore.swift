import SwitchyardSystem
import Logging
import SwitchyardHost
public import SwitchyardPlugin
public import SwitchyardProtocol
import Synchronization
public import Testing

/// A notification the host sent to a plugin: what a test asserts with ``NavigationTestStore/receive(_:sourceLocation:)``.
public struct ReceivedNotification: Sendable, Equatable, CustomStringConvertible {
    /// The plugin that received it.
    public var plugin: String
    /// `coordinator/dismissed`, `coordinator/tabSelected`, `coordinator/appeared`.
    public var method: String
    /// Its params as sent.
    public var params: JSONValue?

    public init(plugin: String, method: String, params: JSONValue?) {
        self.plugin = plugin
        self.method = method
        self.params = params
    }

    /// `coordinator/dismissed` of `entry` (its `route`) in `instance`, for `reason`.
    public static func dismissed(
        _ plugin: String, instance: InstanceID, entry: EntryID, route: String,
        reason: CoordinatorDismissedNotification.Reason
    ) -> Self {
        let params = CoordinatorDismissedNotification.Params(
            instance: instance, entry: entry, route: route, reason: reason)
        return Self(plugin: plugin, method: CoordinatorDismissedNotification.method, params: try? Coding.encode(params))
    }

    /// `coordinator/tabSelected` of `tab` in `instance`.
    public static func tabSelected(_ plugin: String, instance: InstanceID, tab: String, isRepeat: Bool = false) -> Self
    {
        let params = CoordinatorTabSelectedNotification.Params(instance: instance, tab: tab, isRepeat: isRepeat)
        return Self(
            plugin: plugin, method: CoordinatorTabSelectedNotification.method, params: try? Coding.encode(params))
    }

    /// `coordinator/appeared` of `entry` in `instance`.
    public static func appeared(_ plugin: String, instance: InstanceID, entry: EntryID) -> Self {
        let params = CoordinatorAppearedNotification.Params(instance: instance, entry: entry)
        return Self(plugin: plugin, method: CoordinatorAppearedNotification.method, params: try? Coding.encode(params))
    }

    public var description: String { "\(plugin) ← \(method) \(params.map { "\($0)" } ?? "")" }
}

/// Plugins run inside the test by the real host, with its navigation core: a test sends what a user or a client does
/// and asserts every change of the composed tree and every notification the plugins received. The Composable
/// Architecture's `TestStore`, for navigation across plugins.
///
/// Exhaustive by default: the expected tree after each event is the last asserted one changed by the test's closure,
/// and must equal the host's exactly (a failure shows the difference, `−` expected, `+` actual); a change the test
/// did not assert (a plugin's own `navigate`, say) and a notification it did not ``receive(_:sourceLocation:)`` fail
/// the next step, or ``finish(sourceLocation:)``. With ``Exhaustivity/off`` only what the closure changed is compared
/// and unasserted notifications are let go.
///
/// ```swift
/// @Test func opensATodo() async throws {
///     let store = try await NavigationTestStore([todosPlugin], root: CoordinatorReference(plugin: "todos", type: "navigation"))
///     let todos = try #require(store.tree.find("todos", "todos"))
///     try await store.send(.navigate(from: todos.id, [.route("todo", ["id": "7"])])) { tree in
///         tree[todos.id]?.entries = [EntrySnapshot(entry: EntryID(3), route: "todo", transition: .push, params: ["id": "7"], …)]
///     }
///     await store.finish()
/// }
/// ```
@MainActor
public final class NavigationTestStore {
    /// How much a test must assert.
    public enum Exhaustivity: Sendable, Equatable {
        /// Every change of the tree and every notification.
        case on
        /// What each closure changed; the rest is let go.
        case off
    }

    /// What a user or a client does.
    public enum Event: Sendable, CustomStringConvertible {
        /// A chain of steps from an instance (nil: the root), as a control client's `navigate`.
        case navigate(from: InstanceID? = nil, [NavigationStep])
        /// A deep link (`switchyard://…`).
        case open(String)
        /// A screen's action (`user/action`): its owner decides what follows.
        case action(instance: InstanceID, entry: EntryID, action: String, params: JSONValue? = nil)
        /// The user dismissed an entry (a swipe, the back button): `user/dismissed`.
        case dismiss(instance: InstanceID, entry: EntryID)

        public var description: String {
            switch self {
            case .navigate(let start, let steps):
                "navigate from \(start.map { "#\($0.rawValue)" } ?? "the root"): "
                    + steps.map(Self.describe).joined(separator: ", ")
            case .open(let url): "open \(url)"
            case .action(let instance, let entry, let action, let params):
                "action \(action) on entry \(entry.rawValue) of #\(instance.rawValue)\(params.map { " \($0)" } ?? "")"
            case .dismiss(let instance, let entry):
                "the user dismissed entry \(entry.rawValue) of #\(instance.rawValue)"
            }
        }

        private static func describe(_ step: NavigationStep) -> String {
            var text = step.op.rawValue
            if let route = step.route { text += " \(route)" }
            if let tab = step.tab { text += " \(tab)" }
            if let entry = step.entry { text += " entry \(entry.rawValue)" }
            if let params = step.params { text += " \(params)" }
            return text
        }
    }

    /// How much this test asserts; may change between steps.
    public var exhaustivity: Exhaustivity
    /// The tree as the test last asserted it.
    public private(set) var tree: TreeSnapshot

    /// The id the host gives the next entry it creates: ids are handed out in order, one after the largest the tree
    /// holds, so a test can name the entries it expects.
    public var nextEntryID: EntryID {
        let entries = tree.instances.flatMap { instance in
            [instance.root, instance.child].compactMap { $0 } + (instance.entries ?? []) + (instance.tabs ?? [])
        }
        return EntryID((entries.map(\.entry.rawValue).max() ?? 0) + 1)
    }
    private let host: HostHandle
    private let received: ReceivedNotifications
    private let changes: Changes
    private var unasserted: [ReceivedNotification] = []
    private var finished = false

    /// Starts `plugins` inside this process under the real host, composed with `root` as the tree's root
    /// (`arguments` by plugin name: what each reads with `PluginArguments`). `absent` names the app's other plugins,
    /// which this test leaves out: routes into them compose, and their nodes are placeholders, as when a plugin does
    /// not serve.
    public init(
        _ plugins: [Plugin], root: CoordinatorReference, absent: [String] = [], arguments: [String: [String]] = [:],
        exhaustivity: Exhaustivity = .on
    ) async throws {
        self.exhaustivity = exhaustivity
        let received = ReceivedNotifications()
        self.received = received
        var options = HostOptions(shutdownGraceMs: 200)
        options.runInProcess(
            Dictionary(plugins.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }), recorder: received)
        // The command is never run (the plugin runs in this process); it only has to name a file that exists.
        let entries =
            plugins.map { PluginManifest(name: $0.name, command: ["/bin/true"], args: arguments[$0.name]) }
            + absent.map {
                PluginManifest(name: $0, command: ["/bin/true"], restart: RestartPolicy(policy: .temporary))
            }
        options.leaveOut(absent)
        let manifest = Manifest(app: "test-store", root: root, plugins: entries)
        // Quiet, unless SWITCHYARD_TEST_STORE_LOG is set: then the host's log goes to stderr, to see why a test's
        // plugins do not compose or start.
        let logger = Logger(label: "switchyard-test-store") { label in
            let handler: any LogHandler =
                SystemProcess.environmentValue("SWITCHYARD_TEST_STORE_LOG") == nil
                ? SwiftLogNoOpLogHandler() : StreamLogHandler.standardError(label: label)
            return handler
        }
        host = try await HostHandle.start(manifest: manifest, options: options, logger: logger)
        let changes = Changes()
        self.changes = changes
        let events = host.events()
        Task {
            for await event in events { if case .treeChanged(let change) = event { changes.append(change.snapshot) } }
        }
        tree = await host.snapshot()
        changes.assert(through: tree.revision)
        unasserted = received.take()
    }

    // MARK: - Steps

    /// Sends `event`, waits for the host's answer, and checks the tree it left against the last asserted tree changed
    /// by `update`; returns the host's answer. An event the host refuses fails the test (see ``sendRefused(_:sourceLocation:)``).
    @discardableResult
    public func send(
        _ event: Event, sourceLocation: SourceLocation = #_sourceLocation,
        _ update: ((inout TreeSnapshot) throws -> Void)? = nil
    ) async throws -> NavigateRequest.Result {
        checkNothingPending(before: "this step", sourceLocation)
        let result: NavigateRequest.Result
        do {
            result = try await perform(event)
        } catch {
            Issue.record("the host refused \(event): \(error)", sourceLocation: sourceLocation)
            throw error
        }
        let actual = await host.snapshot()
        try compare(actual, update, what: "after \(event)", sourceLocation)
        changes.assert(through: actual.revision)
        unasserted += received.take()
        return result
    }

    /// Sends `event`, expects the host to refuse it, and checks that nothing changed; returns the refusal.
    @discardableResult
    public func sendRefused(_ event: Event, sourceLocation: SourceLocation = #_sourceLocation) async -> ResponseError? {
        checkNothingPending(before: "this step", sourceLocation)
        do {
            let result = try await perform(event)
            Issue.record("the host accepted \(event) (revision \(result.revision))", sourceLocation: sourceLocation)
            return nil
        } catch {
            let actual = await host.snapshot()
            if actual != tree {
                fail(
                    "a refused \(event) changed the tree:\n" + SnapshotDiff.describe(expected: tree, actual: actual),
                    sourceLocation)
            }
            unasserted += received.take()
            return error
        }
    }

    /// Waits (at most `timeoutMs`) for a change nobody sent — a plugin's own `navigate` from a timer or after an
    /// answer — and checks it against the last asserted tree changed by `update`.
    public func receiveChange(
        timeoutMs: Int = 5_000, sourceLocation: SourceLocation = #_sourceLocation,
        _ update: ((inout TreeSnapshot) throws -> Void)? = nil
    ) async throws {
        guard let next = await changes.next(after: tree.revision, timeoutMs: timeoutMs) else {
            Issue.record("no change of the tree came within \(timeoutMs) ms", sourceLocation: sourceLocation)
            return
        }
        try compare(next, update, what: "at revision \(next.revision)", sourceLocation)
        changes.assert(through: next.revision)
        unasserted += received.take()
    }

    /// Asserts the next notification a plugin received (in the order the host sent them).
    public func receive(_ expected: ReceivedNotification, sourceLocation: SourceLocation = #_sourceLocation) {
        unasserted += received.take()
        guard !unasserted.isEmpty else {
            Issue.record("expected \(expected), but no notification is left to assert", sourceLocation: sourceLocation)
            return
        }
        let next = unasserted.removeFirst()
        if next != expected {
            Issue.record("expected \(expected)\n     got \(next)", sourceLocation: sourceLocation)
        }
    }

    /// Ends the test: stops the host and, when exhaustive, fails on anything left unasserted. Call it at the end
    /// of every test: a store dropped without it only starts its host's shutdown, and checks nothing.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
        guard !finished else { return }
        finished = true
        checkNothingPending(before: "the end of the test", sourceLocation)
        await host.shutdown()
    }

    /// A test that ends without ``finish(sourceLocation:)`` (it threw, or its time limit cancelled it) must not leave
    /// its host and in-process plugins running for the rest of the test run.
    deinit {
        guard !finished else { return }
        let host = self.host
        Task { await host.shutdown() }
    }

    // MARK: - Checks

    private func perform(_ event: Event) async throws(ResponseError) -> NavigateRequest.Result {
        switch event {
        case .navigate(let start, let steps): try await host.navigate(from: start, steps)
        case .open(let url): try await host.open(url)
        case .action(let instance, let entry, let action, let params):
            try await host.userAction(instance: instance, entry: entry, action: action, params: params)
        case .dismiss(let instance, let entry): try await host.userDismissed(instance: instance, entry: entry)
        }
    }

    private func compare(
        _ actual: TreeSnapshot, _ update: ((inout TreeSnapshot) throws -> Void)?, what: String,
        _ sourceLocation: SourceLocation
    ) throws {
        var expected = tree
        expected.revision = actual.revision
        try update?(&expected)
        let compared: (expected: TreeSnapshot, actual: TreeSnapshot)
        switch exhaustivity {
        case .on:
            compared = (expected, actual)
        case .off:
            // Only the instances the closure changed (added, removed or edited) are held to it.
            let touched = SnapshotDiff.instancesChanged(from: tree, to: expected)
            compared = (expected.only(touched), actual.only(touched))
        }
        if compared.expected != compared.actual {
            fail(
                "the tree \(what) is not what the test expected (− expected, + actual):\n"
                    + SnapshotDiff.describe(expected: compared.expected, actual: compared.actual), sourceLocation)
        }
        tree = actual
    }

    /// Records a failure of the test, at the test's line.
    private func fail(_ message: String, _ sourceLocation: SourceLocation) {
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }

    private func checkNothingPending(before what: String, _ sourceLocation: SourceLocation) {
        unasserted += received.take()
        guard exhaustivity == .on else {
            unasserted.removeAll()
            changes.assert(through: .max)
            return
        }
        for change in changes.unasserted(after: tree.revision) {
            fail(
                "a change to revision \(change.revision) was not asserted before \(what) (receiveChange) "
                    + "(− last asserted, + actual):\n" + SnapshotDiff.describe(expected: tree, actual: change),
                sourceLocation)
            tree = change
        }
        if !unasserted.isEmpty {
            fail(
                "\(unasserted.count) notification(s) were not asserted before \(what) (receive):\n"
                    + unasserted.map { "  \($0)" }.joined(separator: "\n"), sourceLocation)
            unasserted.removeAll()
        }
    }
}

/// The tree's published revisions, as the host's events report them (any thread).
private final class Changes: Sendable {
    private struct State {
        var snapshots: [TreeSnapshot] = []
        /// Who waits for a revision after `after`, numbered so a late timeout cannot end a later wait.
        var waiter: (number: Int, after: UInt64, continuation: CheckedContinuation<TreeSnapshot?, Never>)?
        var waits = 0
    }

    private let state = Mutex(State())

    func append(_ snapshot: TreeSnapshot) {
        let resumed = state.withLock { state -> CheckedContinuation<TreeSnapshot?, Never>? in
            state.snapshots.append(snapshot)
            guard let waiter = state.waiter, snapshot.revision > waiter.after else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        resumed?.resume(returning: snapshot)
    }

    /// Forgets the revisions up to `revision`: they are asserted.
    func assert(through revision: UInt64) { state.withLock { $0.snapshots.removeAll { $0.revision <= revision } } }

    /// Revisions published after `revision` and not asserted yet.
    func unasserted(after revision: UInt64) -> [TreeSnapshot] {
        state.withLock { $0.snapshots.filter { $0.revision > revision } }
    }

    /// The first revision after `revision`, waiting for it at most `timeoutMs`.
    func next(after revision: UInt64, timeoutMs: Int) async -> TreeSnapshot? {
        await withCheckedContinuation { continuation in
            let (ready, number) = state.withLock { state -> (TreeSnapshot?, Int) in
                if let first = state.snapshots.first(where: { $0.revision > revision }) { return (first, 0) }
                state.waits += 1
                state.waiter = (state.waits, revision, continuation)
                return (nil, state.waits)
            }
            if let ready {
                continuation.resume(returning: ready)
                return
            }
            Task { [weak self] in
                try? await Task.sleep(for: .milliseconds(timeoutMs))
                let expired = self?.state.withLock { state -> CheckedContinuation<TreeSnapshot?, Never>? in
                    guard let waiter = state.waiter, waiter.number == number else { return nil }
                    state.waiter = nil
                    return waiter.continuation
                }
                expired?.resume(returning: nil)
            }
        }
    }
}

extension TreeSnapshot {
    /// An instance by id, to change it in an expected tree: `tree[todos.id]?.entries = […]`.
    public subscript(_ id: InstanceID) -> InstanceSnapshot? {
        get { instances.first { $0.id == id } }
        set {
            let index = instances.firstIndex { $0.id == id }
            switch (index, newValue) {
            case (let index?, let value?): instances[index] = value
            case (let index?, nil): instances.remove(at: index)
            case (nil, let value?): instances.append(value)
            case (nil, nil): break
            }
        }
    }

    /// Only the instances `ids` (and the revision): what a non-exhaustive step compares.
    fileprivate func only(_ ids: Set<InstanceID>) -> TreeSnapshot {
        var copy = self
        copy.instances = instances.filter { ids.contains($0.id) }
        return copy
    }
}
