// Deferred deep links (Protocol/README.md §13.5): a link that cannot be applied yet, because a guard on its path says
// "not yet" or because it leads through a root that is not active, waits in the host until it can be, then applies
// as its own revision. These are the wire types: the condition it waits for, a guard's deferral, the pending link as
// clients see it, and the control methods and notification around it.

/// What a deferred deep link waits for: a fact about the tree the host checks after every revision.
///
/// On the wire exactly one of `root` or `tab` names the route: `{"root": "authenticated"}` holds when that root is
/// the active root of the coordinator meant; `{"tab": "inbox"}` when that coordinator shows that tab. The
/// coordinator is `instance`, else the first instance of `plugin`.`type` that has it (depth-first), else, in a
/// guard's deferral, the instance whose route the guard refused (the host fills it in).
public struct DeferCondition: Codable, Sendable, Hashable, CustomStringConvertible {
    /// Which fact about the coordinator's routes.
    public enum Kind: String, Codable, Sendable, Hashable {
        /// The route is the stack's active root.
        case root
        /// The tabs coordinator shows the route as a tab.
        case tab
    }

    public var kind: Kind
    /// The root or tab route.
    public var route: String
    /// The coordinator instance it is about.
    public var instance: InstanceID?
    /// With `type`: any instance of this type (and plugin; absent: the plugin of the guard that deferred).
    public var plugin: String?
    public var type: String?

    public init(
        _ kind: Kind, _ route: String, instance: InstanceID? = nil, plugin: String? = nil, type: String? = nil
    ) {
        self.kind = kind
        self.route = route
        self.instance = instance
        self.plugin = plugin
        self.type = type
    }

    /// The route is the active root (of `instance`, else of any `plugin`.`type`, else of the refused coordinator).
    public static func root(
        _ route: String, instance: InstanceID? = nil, plugin: String? = nil, type: String? = nil
    ) -> DeferCondition {
        DeferCondition(.root, route, instance: instance, plugin: plugin, type: type)
    }

    /// The tab is shown (by `instance`, else by any `plugin`.`type`, else by the refused coordinator).
    public static func tab(
        _ route: String, instance: InstanceID? = nil, plugin: String? = nil, type: String? = nil
    ) -> DeferCondition {
        DeferCondition(.tab, route, instance: instance, plugin: plugin, type: type)
    }

    /// "root 'authenticated' of #1 is active", "tab 'inbox' of authenticated.home is shown".
    public var description: String {
        let subject =
            if let instance { " of \(instance)" } else if let type {
                " of \(plugin.map { "\($0)." } ?? "")\(type)"
            } else { "" }
        switch kind {
        case .root: return "root '\(route)'\(subject) is active"
        case .tab: return "tab '\(route)'\(subject) is shown"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case root, tab, instance, plugin, type
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let root = try container.decodeIfPresent(String.self, forKey: .root)
        let tab = try container.decodeIfPresent(String.self, forKey: .tab)
        switch (root, tab) {
        case (let route?, nil) where !route.isEmpty: (kind, self.route) = (.root, route)
        case (nil, let route?) where !route.isEmpty: (kind, self.route) = (.tab, route)
        default:
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "a condition names exactly one of 'root' or 'tab', a route name"))
        }
        instance = try container.decodeIfPresent(InstanceID.self, forKey: .instance)
        plugin = try container.decodeIfPresent(String.self, forKey: .plugin)
        type = try container.decodeIfPresent(String.self, forKey: .type)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(route, forKey: kind == .root ? .root : .tab)
        try container.encodeIfPresent(instance, forKey: .instance)
        try container.encodeIfPresent(plugin, forKey: .plugin)
        try container.encodeIfPresent(type, forKey: .type)
    }
}

/// A guard's "not yet" (`-32013 rejectedByGuard` with `data.defer`): the route is refused now, and a deferred link
/// that needed it waits `until` the condition holds. `redirect` is what to show meanwhile (a sign-in): steps the host
/// applies once, from the instance whose route was refused, as that instance's plugin would navigate.
public struct LinkDeferral: Codable, Sendable, Equatable {
    public var until: DeferCondition
    public var redirect: [NavigationStep]?

    public init(until: DeferCondition, redirect: [NavigationStep]? = nil) {
        self.until = until
        self.redirect = redirect
    }

    /// The deferral a guard's refusal carries, if it carries one (`nil` for a plain refusal). A `defer` member that
    /// is not a deferral is the plugin's mistake: `invalidAnswer` naming the field.
    public init?(refusal: ResponseError) throws(ResponseError) {
        guard refusal.code == .rejectedByGuard, let value = refusal.data?["defer"] else { return nil }
        do { self = try Coding.decode(LinkDeferral.self, from: value) } catch {
            let (field, reason) = describeDecodingError(error)
            let plugin = refusal.data?["plugin"]?.stringValue ?? "?"
            throw ResponseError(
                .invalidAnswer,
                "plugin '\(plugin)' deferred a route with an invalid 'data.defer'\(field.map { " (field '\($0)')" } ?? ""): \(reason)",
                data: ["plugin": .string(plugin), "field": .string("data.defer" + (field.map { ".\($0)" } ?? ""))])
        }
    }

    /// The deferral as the `defer` member of a refusal's `data` carries it.
    public var json: JSONValue { (try? Coding.encode(self)) ?? .null }
}

/// A deep link waiting in the host (one per app at most).
public struct DeferredDeepLink: Codable, Sendable, Equatable {
    /// Numbered from 1 in the host's lifetime; `deepLink/cancel` may name it.
    public var id: Int
    public var url: String
    /// What it waits for.
    public var until: DeferCondition
    /// How long it may wait in all, from when it was opened, in milliseconds.
    public var deferMs: Int

    public init(id: Int, url: String, until: DeferCondition, deferMs: Int) {
        self.id = id
        self.url = url
        self.until = until
        self.deferMs = deferMs
    }
}

/// `deepLink/cancel` (client → host): drops the pending deep link (the one named by `id`, or whichever is
/// pending). Answers the link it dropped, or `cancelled: null` when none was pending (a link the host has begun to
/// apply is no longer pending).
public enum DeepLinkCancelRequest: ControlRequest {
    public static let method = "deepLink/cancel"

    public struct Params: Codable, Sendable, Equatable {
        public var id: Int?
        public init(id: Int? = nil) { self.id = id }
    }

    public struct Result: Codable, Sendable, Equatable {
        public var cancelled: DeferredDeepLink?
        public init(cancelled: DeferredDeepLink?) { self.cancelled = cancelled }

        // `cancelled: null` is written, so a reader sees the answer says "nothing was pending".
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(cancelled, forKey: .cancelled)
        }
    }
}

/// `deepLink/pending` (client → host): the deep link waiting now, if any (`pending: null` otherwise).
public enum DeepLinkPendingRequest: ControlRequest {
    public static let method = "deepLink/pending"
    public typealias Params = Empty

    public struct Result: Codable, Sendable, Equatable {
        public var pending: DeferredDeepLink?
        public init(pending: DeferredDeepLink?) { self.pending = pending }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(pending, forKey: .pending)
        }
    }
}

/// `deepLink/changed` (host → subscribed client): a deferred deep link became pending, or ended.
public enum DeepLinkChangedNotification: ControlNotification {
    public static let method = "deepLink/changed"

    /// Where the link is now.
    public enum State: String, Codable, Sendable, CaseIterable {
        /// It waits (again, after a guard deferred it once more: `until` may have changed).
        case pending
        /// It was applied as a revision of its own (`revision`, `instance`).
        case applied
        /// A newer link took its place (`replacedBy`).
        case replaced
        /// Its `deferMs` passed.
        case timedOut
        /// `deepLink/cancel` dropped it.
        case cancelled
        /// It could not be applied after all (`error`: the link is invalid now, or a guard refused it).
        case invalid
    }

    public struct Params: Codable, Sendable, Equatable {
        public var state: State
        public var link: DeferredDeepLink
        public var revision: UInt64?
        public var instance: InstanceID?
        public var error: ResponseError?
        /// The newer link's URL.
        public var replacedBy: String?

        public init(
            state: State, link: DeferredDeepLink, revision: UInt64? = nil, instance: InstanceID? = nil,
            error: ResponseError? = nil, replacedBy: String? = nil
        ) {
            self.state = state
            self.link = link
            self.revision = revision
            self.instance = instance
            self.error = error
            self.replacedBy = replacedBy
        }
    }
}
