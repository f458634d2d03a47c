public import SwitchyardProtocol

/// Whether a deferred link's condition holds on a tree.
public enum ConditionState: Sendable, Equatable {
    case holds
    case waits
    /// It can never hold: the coordinator it names has left the tree (the link must be resolved again).
    case gone
}

extension DeferCondition {
    /// Checks the condition on `tree`: O(1) for a named instance, O(instances of the plugin) for a type.
    public func state(in tree: NavigationTree) -> ConditionState {
        if let instance {
            guard let shown = tree[instance] else { return .gone }
            return has(shown) ? .holds : .waits
        }
        guard let type, let plugin else { return .gone }
        return tree.instances(of: plugin).contains { $0.type == type && has($0) } ? .holds : .waits
    }

    private func has(_ instance: Instance) -> Bool {
        switch kind {
        case .root: instance.root?.route == route
        case .tab: instance.tabs.contains { $0.route == route }
        }
    }
}

/// The app's deferred deep link (§13.5), as a value: what happens when a link is deferred, the tree changes, a
/// try to apply it ends, a client cancels it, or its time runs out. No I/O and no clock: the host passes `now` (its
/// loop's milliseconds) and acts on what each call returns (the notifications to send, the link to try); tests drive
/// it directly.
///
/// One link waits at most. It is *waiting* until its condition holds (or names a coordinator that left the tree),
/// then *being tried*: resolved again and applied, as its own revision, by the host. A try ends applied, invalid, or
/// deferred again (a guard said "not yet" once more), and then it waits again, unless a newer link took its place
/// or its time ran out meanwhile. A link being tried is no longer pending: it cannot be cancelled or replaced (the
/// chain applying it may have committed already); a newer link waits beside it and replaces it if it waits again.
public struct DeferredLinks: Sendable {
    /// A deferred link and when it times out, on the caller's clock.
    public struct Link: Sendable, Equatable {
        public var wire: DeferredDeepLink
        public var deadline: UInt64
    }

    /// How a try to apply the link ended.
    public enum TryOutcome: Sendable, Equatable {
        case applied(revision: UInt64, instance: InstanceID)
        /// A guard deferred it again, until this.
        case deferred(DeferCondition)
        case failed(ResponseError)
    }

    public typealias Notification = DeepLinkChangedNotification.Params

    public private(set) var waiting: Link?
    public private(set) var trying: Link?
    private var nextID = 1

    public init() {}

    /// The link waiting now, as clients see it.
    public var pending: DeferredDeepLink? { waiting?.wire }

    /// When the host must call ``expire(now:)`` next (the waiting link's deadline).
    public var nextDeadline: UInt64? { waiting?.deadline }

    /// Whether the host must look at the tree after each revision.
    public var watchesTree: Bool { waiting != nil }

    /// A link opened with `defer` that cannot be applied now: it waits `until` the condition holds, at most
    /// `deferMs`. A link waiting before is replaced (and says so).
    public mutating func add(
        url: String, until: DeferCondition, deferMs: Int, now: UInt64
    ) -> (link: DeferredDeepLink, replaced: DeferredDeepLink?, notifications: [Notification]) {
        let link = DeferredDeepLink(id: nextID, url: url, until: until, deferMs: deferMs)
        nextID += 1
        let replaced = supersede(by: url)
        waiting = Link(wire: link, deadline: now &+ UInt64(max(0, deferMs)))
        return (link, replaced.link, replaced.notifications + [Notification(state: .pending, link: link)])
    }

    /// A newer link was applied at once (or is about to wait): the one waiting is dropped for it.
    public mutating func supersede(by url: String) -> (link: DeferredDeepLink?, notifications: [Notification]) {
        guard let old = waiting else { return (nil, []) }
        waiting = nil
        return (old.wire, [Notification(state: .replaced, link: old.wire, replacedBy: url)])
    }

    /// After a revision: the waiting link, if its condition holds on `tree` or can no longer (its coordinator left),
    /// is to be tried now; it is no longer pending until the try ends (``tried(_:outcome:tree:now:)``).
    public mutating func linkToTry(in tree: NavigationTree) -> DeferredDeepLink? {
        guard trying == nil, let link = waiting, link.wire.until.state(in: tree) != .waits else { return nil }
        waiting = nil
        trying = link
        return link.wire
    }

    /// A try of the link `id` ended. Deferred again, it waits again for the new condition, unless that holds already
    /// (a guard deferring until what is true would be tried forever: the link is invalid), its time ran out, or a
    /// newer link waits now (which replaces it).
    public mutating func tried(
        _ id: Int, outcome: TryOutcome, tree: NavigationTree, now: UInt64
    ) -> [Notification] {
        guard var link = trying, link.wire.id == id else { return [] }
        trying = nil
        switch outcome {
        case .applied(let revision, let instance):
            return [Notification(state: .applied, link: link.wire, revision: revision, instance: instance)]
        case .failed(let error):
            return [Notification(state: .invalid, link: link.wire, error: error)]
        case .deferred(let until):
            link.wire.until = until
            if let newer = waiting {
                return [Notification(state: .replaced, link: link.wire, replacedBy: newer.wire.url)]
            }
            if now >= link.deadline { return [Notification(state: .timedOut, link: link.wire)] }
            if until.state(in: tree) == .holds {
                let error = ResponseError(
                    .rejectedByGuard,
                    "a guard deferred the link \(link.wire.url) until \(until), which holds already: it cannot be waited for",
                    data: ["url": .string(link.wire.url)])
                return [Notification(state: .invalid, link: link.wire, error: error)]
            }
            waiting = link
            return [Notification(state: .pending, link: link.wire)]
        }
    }

    /// `deepLink/cancel`: drops the waiting link (only if it is `id`, when given). A link being tried is not
    /// pending: nothing is cancelled.
    public mutating func cancel(id: Int?) -> (cancelled: DeferredDeepLink?, notifications: [Notification]) {
        guard let link = waiting, id == nil || id == link.wire.id else { return (nil, []) }
        waiting = nil
        return (link.wire, [Notification(state: .cancelled, link: link.wire)])
    }

    /// The waiting link's time ran out (a link being tried times out if a guard defers it again).
    public mutating func expire(now: UInt64) -> [Notification] {
        guard let link = waiting, now >= link.deadline else { return [] }
        waiting = nil
        return [Notification(state: .timedOut, link: link.wire)]
    }
}
