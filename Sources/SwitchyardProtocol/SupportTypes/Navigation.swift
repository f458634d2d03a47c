/// A host-assigned coordinator instance id, unique for the host's lifetime (never reused).
public struct InstanceID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ value: Int64) { self.rawValue = value }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(Int64.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A host-assigned id of one entry (a root, a pushed or presented screen, a tab, a wrapper's child).
public struct EntryID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ value: Int64) { self.rawValue = value }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "e\(rawValue)" }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(Int64.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// One entry of one instance: `{instance, entry}` (`user/dismissed`, `coordinator/appeared`).
public struct EntryReference: Codable, Sendable, Equatable {
    public var instance: InstanceID
    public var entry: EntryID

    public init(instance: InstanceID, entry: EntryID) {
        self.instance = instance
        self.entry = entry
    }
}

/// What a screen route shows: a name the UI shell maps to a view, and its properties; and, for a shell that renders
/// screens as data, the navigation bar's `title` and the screen's `content` (Protocol/README.md §21).
public struct ScreenDescriptor: Codable, Sendable, Hashable {
    public var name: String
    public var props: JSONValue?
    /// The navigation bar's title; absent: the shell's choice (the Studio shows the name).
    public var title: String? {
        get { drawn?.title }
        set { drawn = Drawn.boxed(title: newValue, content: content) }
    }
    /// The screen's elements, top to bottom, in the vocabulary of §21 (checked by the host against the route's
    /// declared actions before it lands in the tree). Absent: the shell draws the screen from its name and props.
    public var content: JSONValue? {
        get { drawn?.content }
        set { drawn = Drawn.boxed(title: title, content: newValue) }
    }
    /// The title and content, out of line. Inline they cost 40 bytes in every entry of a host's tree, a screen's or
    /// not (an entry's content is as large as its largest case), and most screens have neither: 0.8 MiB of a
    /// 10,000-instance host's heap.
    private var drawn: Drawn?

    private final class Drawn: Hashable, Sendable {
        let title: String?
        let content: JSONValue?

        private init(title: String?, content: JSONValue?) {
            self.title = title
            self.content = content
        }

        /// Nil when there is neither, so descriptors that differ only in how they were built compare equal.
        static func boxed(title: String?, content: JSONValue?) -> Drawn? {
            title == nil && content == nil ? nil : Drawn(title: title, content: content)
        }

        static func == (lhs: Drawn, rhs: Drawn) -> Bool { lhs.title == rhs.title && lhs.content == rhs.content }

        func hash(into hasher: inout Hasher) {
            hasher.combine(title)
            hasher.combine(content)
        }
    }

    public init(name: String, props: JSONValue? = nil, title: String? = nil, content: JSONValue? = nil) {
        self.name = name
        self.props = props
        drawn = Drawn.boxed(title: title, content: content)
    }

    // Codable as a plain struct of the four members would be: absent optionals are left out, in declaration order.
    private enum CodingKeys: String, CodingKey { case name, props, title, content }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            props: try container.decodeIfPresent(JSONValue.self, forKey: .props),
            title: try container.decodeIfPresent(String.self, forKey: .title),
            content: try container.decodeIfPresent(JSONValue.self, forKey: .content))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(props, forKey: .props)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(content, forKey: .content)
    }
}

/// A plugin's decision for a route: show a screen, or open a coordinator (its own or another plugin's).
public enum RouteContent: Codable, Sendable, Hashable {
    case screen(ScreenDescriptor)
    /// Opens a coordinator of `type` in `plugin` (absent: the answering plugin), created with `params`.
    case coordinator(CoordinatorReference, params: JSONValue?)

    enum CodingKeys: String, CodingKey { case screen, coordinator }
    enum CoordinatorKeys: String, CodingKey { case plugin, type, params }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let screen = try container.decodeIfPresent(ScreenDescriptor.self, forKey: .screen) {
            self = .screen(screen)
            return
        }
        guard container.contains(.coordinator) else {
            throw DecodingError.keyNotFound(
                CodingKeys.screen,
                .init(codingPath: decoder.codingPath, debugDescription: "content needs 'screen' or 'coordinator'"))
        }
        let nested = try container.nestedContainer(keyedBy: CoordinatorKeys.self, forKey: .coordinator)
        let reference = CoordinatorReference(
            plugin: try nested.decodeIfPresent(String.self, forKey: .plugin),
            type: try nested.decode(String.self, forKey: .type))
        self = .coordinator(reference, params: try nested.decodeIfPresent(JSONValue.self, forKey: .params))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .screen(let screen): try container.encode(screen, forKey: .screen)
        case .coordinator(let reference, let params):
            var nested = container.nestedContainer(keyedBy: CoordinatorKeys.self, forKey: .coordinator)
            try nested.encodeIfPresent(reference.plugin, forKey: .plugin)
            try nested.encode(reference.type, forKey: .type)
            try nested.encodeIfPresent(params, forKey: .params)
        }
    }
}

/// One step of a navigation chain. Each step applies to the instance the previous one landed on.
///
/// The operations are the union of the four reference libraries (Stinsen, Coordinator, SUICoordinator, Jump); their
/// exact semantics and the choices made where those libraries disagree are in Protocol/README.md §11.
public struct NavigationStep: Codable, Sendable, Hashable {
    public enum Operation: String, Codable, Sendable, CaseIterable {
        case route, popLast, pop, popTo, popCount, popToRoot, popToInitialRoute, setRoot, hasRoot, focusFirst
        case selectTab, dismiss, close, dismissCoordinator, finishFlow, restart, child, parent, top
        case setTabs, setBadge
        case popPath, popPushed, popPushedToRoot, forcePresent
        case refresh
    }

    public var op: Operation
    /// `route`, `setRoot`, `hasRoot`, `focusFirst`.
    public var route: String?
    /// `selectTab` (a tab is a route name).
    public var tab: String?
    /// Route parameters (`route`, `setRoot`), or the parameters to match (`hasRoot`, `focusFirst`).
    public var params: JSONValue?
    /// `pop`: the entry to remove with everything above it.
    public var entry: EntryID?
    /// `popTo`: keep entries 0…index (-1 keeps only the root).
    public var index: Int?
    /// `popCount`: how many entries to remove from the top.
    public var count: Int?
    /// `setRoot`: keep the entries above the root (Stinsen's behaviour) instead of clearing them.
    public var keepStack: Bool?
    /// `setTabs`: the tab route names, in display order (SUICoordinator's `setPages`).
    public var tabs: [String]?
    /// `setBadge`: the tab's badge text; absent clears it (SUICoordinator's `setBadge`).
    public var badge: String?
    /// `route`: the transition to present it with, one the route allows (SUICoordinator's `presentationStyle:`,
    /// Jump's `mode:`); absent: the route's declared `transition`.
    public var transition: Transition?
    /// `route`: the entry's presentation options, replacing the route's declared ones.
    public var presentation: PresentationOptions?

    public init(
        op: Operation, route: String? = nil, tab: String? = nil, params: JSONValue? = nil, entry: EntryID? = nil,
        index: Int? = nil, count: Int? = nil, keepStack: Bool? = nil, tabs: [String]? = nil, badge: String? = nil,
        transition: Transition? = nil, presentation: PresentationOptions? = nil
    ) {
        self.transition = transition
        self.presentation = presentation
        self.tabs = tabs
        self.badge = badge
        self.op = op
        self.route = route
        self.tab = tab
        self.params = params
        self.entry = entry
        self.index = index
        self.count = count
        self.keepStack = keepStack
    }

    public static func route(_ route: String, _ params: JSONValue? = nil) -> Self {
        .init(op: .route, route: route, params: params)
    }
    /// A route presented with a transition it allows, and presentation options of this call.
    public static func route(
        _ route: String, _ params: JSONValue? = nil, as transition: Transition?,
        presentation: PresentationOptions? = nil
    ) -> Self {
        .init(op: .route, route: route, params: params, transition: transition, presentation: presentation)
    }
    public static func setRoot(_ route: String, _ params: JSONValue? = nil, keepStack: Bool? = nil) -> Self {
        .init(op: .setRoot, route: route, params: params, keepStack: keepStack)
    }
    public static func hasRoot(_ route: String, _ params: JSONValue? = nil) -> Self {
        .init(op: .hasRoot, route: route, params: params)
    }
    public static func focusFirst(_ route: String, _ params: JSONValue? = nil) -> Self {
        .init(op: .focusFirst, route: route, params: params)
    }
    public static func selectTab(_ tab: String) -> Self { .init(op: .selectTab, tab: tab) }
    /// The tabs, in display order: new ones are asked of the owner, missing ones leave the tree.
    public static func setTabs(_ tabs: [String]) -> Self { .init(op: .setTabs, tabs: tabs) }
    /// A tab's badge (nil clears it).
    public static func setBadge(_ tab: String, _ badge: String?) -> Self {
        .init(op: .setBadge, tab: tab, badge: badge)
    }
    public static func pop(_ entry: EntryID) -> Self { .init(op: .pop, entry: entry) }
    public static func popTo(_ index: Int) -> Self { .init(op: .popTo, index: index) }
    public static func popCount(_ count: Int) -> Self { .init(op: .popCount, count: count) }
    public static let popLast = Self(op: .popLast)
    public static let popToRoot = Self(op: .popToRoot)
    public static let popToInitialRoute = Self(op: .popToInitialRoute)
    public static let dismiss = Self(op: .dismiss)
    public static let close = Self(op: .close)
    public static let dismissCoordinator = Self(op: .dismissCoordinator)
    public static let finishFlow = Self(op: .finishFlow)
    public static let restart = Self(op: .restart)
    public static let child = Self(op: .child)
    public static let parent = Self(op: .parent)
    public static let top = Self(op: .top)
    /// The Coordinator library's `pop` on the shared navigation path.
    public static let popPath = Self(op: .popPath)
    /// SUICoordinator's `pop`: the last push below the modals; the modals stay.
    public static let popPushed = Self(op: .popPushed)
    /// SUICoordinator's `popToRoot`: every push below the modals; the modals stay.
    public static let popPushedToRoot = Self(op: .popPushedToRoot)
    /// SUICoordinator's `forcePresentation`: presents the route modally over everything, from anywhere.
    public static func forcePresent(_ route: String, _ params: JSONValue? = nil) -> Self {
        .init(op: .forcePresent, route: route, params: params)
    }
    /// Asks the owner again what the top-most entry of `route` shows, and shows that in place (§12.1): how a screen
    /// drawn from data shows data that changed.
    public static func refresh(_ route: String) -> Self { .init(op: .refresh, route: route) }
    /// Asks the owner again what `entry` shows, and shows that in place.
    public static func refresh(entry: EntryID) -> Self { .init(op: .refresh, entry: entry) }
}

/// Where a deep link came from, passed to every plugin the link crosses.
public struct DeepLinkContext: Codable, Sendable, Hashable {
    public var url: String
    /// The path segments (the URL's host first, as Coordinator's `remainingRoutes`).
    public var segments: [String]
    /// Index of the first segment this hop consumed.
    public var index: Int
    /// Query parameters, decoded.
    public var query: [String: String]

    public init(url: String, segments: [String], index: Int, query: [String: String]) {
        self.url = url
        self.segments = segments
        self.index = index
        self.query = query
    }
}

// MARK: - Tree snapshots (the authoritative tree as the host publishes it)

/// The whole navigation tree at one revision: every instance, flat, in depth-first order from the root.
public struct TreeSnapshot: Codable, Sendable, Equatable {
    public var revision: UInt64
    public var root: InstanceID?
    public var instances: [InstanceSnapshot]

    public init(revision: UInt64, root: InstanceID?, instances: [InstanceSnapshot]) {
        self.revision = revision
        self.root = root
        self.instances = instances
    }

    public func instance(_ id: InstanceID) -> InstanceSnapshot? { instances.first { $0.id == id } }

    /// The first instance of a plugin's coordinator type, in the snapshot's order (depth first from the root).
    public func find(_ plugin: String, _ type: String) -> InstanceSnapshot? {
        instances.first { $0.plugin == plugin && $0.type == type }
    }
}

/// One coordinator instance in a snapshot.
public struct InstanceSnapshot: Codable, Sendable, Equatable {
    public struct ParentLink: Codable, Sendable, Hashable {
        public var instance: InstanceID
        public var entry: EntryID
        public init(instance: InstanceID, entry: EntryID) {
            self.instance = instance
            self.entry = entry
        }
    }

    public enum Status: String, Codable, Sendable {
        /// Served by its plugin.
        case ok
        /// Its plugin is down, restarting or failed (the node keeps its place and state), or it is a placeholder its
        /// plugin has not created yet (``InstanceSnapshot/pending``).
        case unavailable
    }

    public var id: InstanceID
    public var plugin: String
    public var type: String
    /// Absent for a placeholder (``pending``): until its plugin creates it, the host may not know its type's kind.
    public var kind: CoordinatorKind?
    /// `true` for a placeholder its plugin has not created yet: it was opened as part of another coordinator's
    /// initial content (a tab, a stack's root, a wrapper's child) while its plugin was not serving, holds no content,
    /// and is created (`coordinator/create`, reason `new`) once the plugin is ready. Absent otherwise.
    public var pending: Bool?
    public var parent: ParentLink?
    public var params: JSONValue?
    public var state: JSONValue?
    public var status: Status
    public var unavailableReason: String?
    /// `stack`: the root entry.
    public var root: EntrySnapshot?
    /// `stack`: pushed and presented entries, bottom first.
    public var entries: [EntrySnapshot]?
    /// `tabs`: the tabs in order.
    public var tabs: [EntrySnapshot]?
    /// `tabs`: the selected tab's route.
    public var selectedTab: String?
    /// `wrapper`: the child.
    public var child: EntrySnapshot?
    /// `tabs`: `true` once the owner chose its tabs at run time (`setTabs`, or a `coordinator/create` answer with
    /// other tabs than declared): a state file's merge then keeps them as they are. Absent otherwise.
    public var dynamicTabs: Bool?

    public init(
        id: InstanceID, plugin: String, type: String, kind: CoordinatorKind?, pending: Bool? = nil,
        parent: ParentLink? = nil,
        params: JSONValue? = nil, state: JSONValue? = nil, status: Status = .ok, unavailableReason: String? = nil,
        root: EntrySnapshot? = nil, entries: [EntrySnapshot]? = nil, tabs: [EntrySnapshot]? = nil,
        selectedTab: String? = nil, child: EntrySnapshot? = nil, dynamicTabs: Bool? = nil
    ) {
        self.dynamicTabs = dynamicTabs
        self.id = id
        self.plugin = plugin
        self.type = type
        self.kind = kind
        self.pending = pending
        self.parent = parent
        self.params = params
        self.state = state
        self.status = status
        self.unavailableReason = unavailableReason
        self.root = root
        self.entries = entries
        self.tabs = tabs
        self.selectedTab = selectedTab
        self.child = child
    }
}

/// One entry: a root, a pushed or presented route, a tab, or a wrapper's child.
public struct EntrySnapshot: Codable, Sendable, Equatable {
    public var entry: EntryID
    public var route: String
    public var transition: Transition
    public var params: JSONValue?
    public var content: ContentSnapshot
    /// A tab's badge (`setBadge`); absent: none.
    public var badge: String?
    /// Presentation options for the UI shell (detents, no interactive dismissal, a custom transition); absent: none.
    public var presentation: PresentationOptions?

    public init(
        entry: EntryID, route: String, transition: Transition, params: JSONValue? = nil, content: ContentSnapshot,
        badge: String? = nil,
        presentation: PresentationOptions? = nil
    ) {
        self.presentation = presentation
        self.entry = entry
        self.route = route
        self.transition = transition
        self.params = params
        self.content = content
        self.badge = badge
    }
}

/// What an entry shows in the tree: a screen, or a child coordinator instance (by id).
public enum ContentSnapshot: Codable, Sendable, Equatable {
    case screen(ScreenDescriptor)
    case coordinator(InstanceID)

    enum CodingKeys: String, CodingKey { case screen, coordinator }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let screen = try container.decodeIfPresent(ScreenDescriptor.self, forKey: .screen) {
            self = .screen(screen)
        } else {
            self = .coordinator(try container.decode(InstanceID.self, forKey: .coordinator))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .screen(let screen): try container.encode(screen, forKey: .screen)
        case .coordinator(let id): try container.encode(id, forKey: .coordinator)
        }
    }
}
