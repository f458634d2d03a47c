/// What a coordinator instance is.
public enum CoordinatorKind: String, Codable, Sendable, CaseIterable {
    /// A root entry plus an ordered stack of pushed and presented entries (Stinsen's `NavigationCoordinatable`).
    case stack
    /// Ordered tabs, one selected (Stinsen's `TabCoordinatable`).
    case tabs
    /// Exactly one child (Stinsen's `ViewWrapperCoordinator` / `NavigationViewCoordinator`).
    case wrapper
}

/// How a route presents its content.
public enum Transition: String, Codable, Sendable, CaseIterable {
    /// A root of a stack coordinator (shown with `setRoot`; the initial one at creation).
    case root
    /// Pushed onto the stack's navigation context.
    case push
    /// Presented modally (a sheet), on top of everything of this coordinator.
    case modal
    /// Presented full screen.
    case fullScreen
    /// A tab of a tabs coordinator.
    case tab
    /// The one child of a wrapper coordinator.
    case child

    /// Whether an entry with this transition sits in a stack's ordered entries.
    public var isStackEntry: Bool { self == .push || self == .modal || self == .fullScreen }
    /// Whether it is presented modally (a modal or full-screen entry).
    public var isModal: Bool { self == .modal || self == .fullScreen }

    /// The coordinator kind this transition belongs to.
    public var ownerKind: CoordinatorKind {
        switch self {
        case .root, .push, .modal, .fullScreen: .stack
        case .tab: .tabs
        case .child: .wrapper
        }
    }
}

/// The JSON type a route parameter must have.
public enum ParamType: String, Codable, Sendable, CaseIterable {
    case string, integer, number, boolean, object, array, any
}

/// One declared parameter of a route.
public struct ParamDeclaration: Codable, Sendable, Equatable {
    public var name: String
    public var type: ParamType
    /// Whether the route cannot be taken without it. Default true.
    public var required: Bool?

    public init(name: String, type: ParamType, required: Bool? = nil) {
        self.name = name
        self.type = type
        self.required = required
    }

    public var isRequired: Bool { required ?? true }
}

/// A coordinator type, optionally in another plugin.
public struct CoordinatorReference: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The plugin that owns the type; absent means the declaring plugin itself.
    public var plugin: String?
    public var type: String

    public init(plugin: String? = nil, type: String) {
        self.plugin = plugin
        self.type = type
    }

    public var description: String { plugin.map { "\($0).\(type)" } ?? type }
}

/// An action a screen emits (a button, `onNext`): what a UI shell may deliver with `user/action`, checked by the
/// host against this declaration before the owning plugin hears of it (Protocol/README.md §12.6).
public struct ActionDeclaration: Codable, Sendable, Equatable, ExpressibleByStringLiteral {
    /// Unique within its route.
    public var name: String
    /// Declared parameters, like a route's; absent means any params are accepted.
    public var params: [ParamDeclaration]?

    public init(name: String, params: [ParamDeclaration]? = nil) {
        self.name = name
        self.params = params
    }

    /// An action without declared params: `actions: ["complete"]`.
    public init(stringLiteral name: String) { self.init(name: name) }
}

/// Presentation options of an entry, as data for the UI shell to honour (SUICoordinator's detents and custom
/// transitions, SwiftUI's `interactiveDismissDisabled`). Every member is optional; absent means the UI's default.
public struct PresentationOptions: Codable, Sendable, Hashable {
    /// Sheet detents, e.g. `["medium", "large"]` (names the UI shell maps to its own).
    public var detents: [String]?
    /// The user cannot dismiss it interactively: `user/dismissed` of it is refused with `notAllowed`.
    public var interactiveDismissDisabled: Bool?
    /// A named custom transition the UI shell knows (`fade`, `zoom`...).
    public var customTransition: String?

    public init(detents: [String]? = nil, interactiveDismissDisabled: Bool? = nil, customTransition: String? = nil) {
        self.detents = detents
        self.interactiveDismissDisabled = interactiveDismissDisabled
        self.customTransition = customTransition
    }
}

/// What a tab bar shows for a tab (Stinsen's `tabItem`, SwiftUI's `.tabItem { Label(title, systemImage:) }`): data
/// for the UI shell, declared on a `tab` route (Protocol/README.md §21).
public struct TabItem: Codable, Sendable, Equatable {
    /// The tab's label.
    public var title: String
    /// A symbol of the documented set (``ScreenVocabulary/symbols``); absent: the shell's choice.
    public var symbol: String?
    /// The badge the tab's entry starts with (then `setBadge` changes it); absent: none.
    public var badge: String?

    public init(title: String, symbol: String? = nil, badge: String? = nil) {
        self.title = title
        self.symbol = symbol
        self.badge = badge
    }
}

/// One route a coordinator type declares.
public struct RouteDeclaration: Codable, Sendable, Equatable {
    /// Unique within its coordinator type.
    public var name: String
    public var transition: Transition
    /// A deep-link path pattern relative to the coordinator, e.g. `todo/:id`, `""` (matches without consuming),
    /// `files/**`. Absent: the route cannot be reached by a deep link.
    public var deepLink: String?
    /// Declared parameters; absent means any params are accepted.
    public var params: [ParamDeclaration]?
    /// The coordinator this route opens. Absent: the route shows a screen.
    public var target: CoordinatorReference?
    /// On a route with `target`: the params its answer creates that coordinator with, declared like `params` (what
    /// the target type's own `params` must accept, checked by composition, §14). Absent: not declared.
    public var targetParams: [ParamDeclaration]?
    /// The actions the route's screen emits (`user/action`); absent or empty: none. Only a screen route has them.
    public var actions: [ActionDeclaration]?
    /// Other transitions a `route` step may pick for this stack route (`transition` is the default); absent: none.
    public var transitions: [Transition]?
    /// Presentation options its entries get unless a `route` step gives its own.
    public var presentation: PresentationOptions?
    /// On a `tab` route: what the tab bar shows for it (title, symbol, starting badge).
    public var tabItem: TabItem?

    public init(
        name: String, transition: Transition, deepLink: String? = nil, params: [ParamDeclaration]? = nil,
        target: CoordinatorReference? = nil, actions: [ActionDeclaration]? = nil, transitions: [Transition]? = nil,
        presentation: PresentationOptions? = nil, targetParams: [ParamDeclaration]? = nil, tabItem: TabItem? = nil
    ) {
        self.tabItem = tabItem
        self.targetParams = targetParams
        self.transitions = transitions
        self.presentation = presentation
        self.name = name
        self.transition = transition
        self.deepLink = deepLink
        self.params = params
        self.target = target
        self.actions = actions
    }

    /// Whether a `route` step may present it with `transition`: the default, or one of `transitions`.
    public func allows(_ transition: Transition) -> Bool {
        transition == self.transition || transitions?.contains(transition) == true
    }

    /// The declared action of that name.
    public func action(named name: String) -> ActionDeclaration? { actions?.first { $0.name == name } }
}

/// A coordinator type a plugin implements.
public struct CoordinatorDeclaration: Codable, Sendable, Equatable {
    /// Unique within the plugin.
    public var type: String
    public var kind: CoordinatorKind
    /// Stack: the root route shown at creation. Tabs: the tab selected at creation (default: the first).
    public var initialRoute: String?
    public var routes: [RouteDeclaration]
    /// True when the plugin resolves deep links into this type itself (`coordinator/deepLink`) instead of the host
    /// matching the routes' patterns.
    public var customDeepLinks: Bool?
    /// True when the plugin wants `coordinator/appeared` for this type's entries (§12.9); absent: never sent.
    public var appearance: Bool?
    /// The params an instance is created with (`coordinator/create`'s `params`, which the opening route's answer
    /// gives), declared like a route's; the host checks an answer that opens this type against them. Absent: any.
    public var params: [ParamDeclaration]?

    public init(
        type: String, kind: CoordinatorKind, initialRoute: String? = nil, routes: [RouteDeclaration],
        customDeepLinks: Bool? = nil, appearance: Bool? = nil, params: [ParamDeclaration]? = nil
    ) {
        self.params = params
        self.type = type
        self.kind = kind
        self.initialRoute = initialRoute
        self.routes = routes
        self.customDeepLinks = customDeepLinks
        self.appearance = appearance
    }

    public func route(named name: String) -> RouteDeclaration? { routes.first { $0.name == name } }
}

/// A plugin's self-description.
public struct PluginInfo: Codable, Sendable, Equatable {
    public var name: String
    public var version: String

    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }
}

/// The limits the host enforces on a plugin, announced in `initialize` so a plugin can stay within them.
public struct PluginLimits: Codable, Sendable, Equatable {
    /// Longest line accepted from the plugin, in bytes (without the newline).
    public var maxLineBytes: Int
    /// Messages per second the plugin may send (token bucket, burst of the same size).
    public var maxMessagesPerSecond: Int
    /// Requests the plugin may have outstanding towards the host.
    public var maxOutstandingRequests: Int
    /// Coordinator instances the plugin may own.
    public var maxInstances: Int
    /// stderr bytes per second forwarded to the host log (excess is dropped and counted).
    public var maxStderrBytesPerSecond: Int
    /// How long the host waits for an answer, in milliseconds. A request that times out counts as a hang.
    public var requestTimeoutMs: Int
    /// The host sends `$/ping` after this long without a message from the plugin (0: never).
    public var heartbeatIntervalMs: Int
    /// A heartbeat `$/ping` unanswered for this long means the plugin is hung.
    public var heartbeatTimeoutMs: Int
    /// Protocol errors (invalid lines, limits exceeded) tolerated within 10 s; one more quarantines the plugin.
    public var maxProtocolErrors: Int

    public init(
        maxLineBytes: Int = 1 << 20, maxMessagesPerSecond: Int = 20_000, maxOutstandingRequests: Int = 64,
        maxInstances: Int = 10_000, maxStderrBytesPerSecond: Int = 64 << 10, requestTimeoutMs: Int = 5_000,
        heartbeatIntervalMs: Int = 1_000, heartbeatTimeoutMs: Int = 2_000, maxProtocolErrors: Int = 20
    ) {
        self.maxLineBytes = maxLineBytes
        self.maxMessagesPerSecond = maxMessagesPerSecond
        self.maxOutstandingRequests = maxOutstandingRequests
        self.maxInstances = maxInstances
        self.maxStderrBytesPerSecond = maxStderrBytesPerSecond
        self.requestTimeoutMs = requestTimeoutMs
        self.heartbeatIntervalMs = heartbeatIntervalMs
        self.heartbeatTimeoutMs = heartbeatTimeoutMs
        self.maxProtocolErrors = maxProtocolErrors
    }

    enum CodingKeys: String, CodingKey {
        case maxLineBytes, maxMessagesPerSecond, maxOutstandingRequests, maxInstances, maxStderrBytesPerSecond,
            requestTimeoutMs, heartbeatIntervalMs, heartbeatTimeoutMs, maxProtocolErrors
    }

    /// Absent members keep their defaults, so a peer that knows fewer limits still decodes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = PluginLimits()
        func value(_ key: CodingKeys, _ fallback: Int) throws -> Int {
            try container.decodeIfPresent(Int.self, forKey: key) ?? fallback
        }
        self.init(
            maxLineBytes: try value(.maxLineBytes, defaults.maxLineBytes),
            maxMessagesPerSecond: try value(.maxMessagesPerSecond, defaults.maxMessagesPerSecond),
            maxOutstandingRequests: try value(.maxOutstandingRequests, defaults.maxOutstandingRequests),
            maxInstances: try value(.maxInstances, defaults.maxInstances),
            maxStderrBytesPerSecond: try value(.maxStderrBytesPerSecond, defaults.maxStderrBytesPerSecond),
            requestTimeoutMs: try value(.requestTimeoutMs, defaults.requestTimeoutMs),
            heartbeatIntervalMs: try value(.heartbeatIntervalMs, defaults.heartbeatIntervalMs),
            heartbeatTimeoutMs: try value(.heartbeatTimeoutMs, defaults.heartbeatTimeoutMs),
            maxProtocolErrors: try value(.maxProtocolErrors, defaults.maxProtocolErrors))
    }

    public static let defaults = PluginLimits()
}
