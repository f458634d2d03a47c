public import SwitchyardProtocol

/// Who asked for a chain: a control client (anything goes) or a plugin (ownership rules apply).
public enum Requester: Sendable, Equatable {
    case control
    case plugin(String)
}

/// A question only a plugin can answer: what a route shows (`coordinator/route`).
public struct RouteQuestion: Sendable, Equatable {
    public let instance: InstanceID
    public let plugin: String
    public let type: String
    public let route: String
    public let transition: Transition
    public let params: JSONValue?
    public let link: DeepLinkContext?

    public var request: CoordinatorRouteRequest.Params {
        .init(instance: instance, type: type, route: route, transition: transition, params: params, link: link)
    }
}

/// A new (or restarted) instance whose plugin must give its initial content (`coordinator/create`).
public struct CreateQuestion: Sendable, Equatable {
    public let instance: InstanceID
    public let plugin: String
    public let type: String
    public let reason: CoordinatorCreateRequest.Reason
    public let params: JSONValue?
    public let parent: CoordinatorCreateRequest.Parent?
    public let state: JSONValue?

    public var request: CoordinatorCreateRequest.Params {
        .init(instance: instance, type: type, reason: reason, params: params, parent: parent, state: state)
    }
}

/// What a chain is waiting for.
public enum ChainNeed: Sendable, Equatable {
    case route(RouteQuestion)
    case create(CreateQuestion)

    /// The plugin that must answer.
    public var plugin: String {
        switch self {
        case .route(let question): question.plugin
        case .create(let question): question.plugin
        }
    }
}

/// What the caller got from the plugin.
public enum ChainAnswer: Sendable {
    case route(Result<CoordinatorRouteRequest.Result, ResponseError>)
    case create(Result<CoordinatorCreateRequest.Result, ResponseError>)
}

/// Messages to send to plugins once a chain has been committed.
public enum ChainEffect: Sendable, Equatable {
    /// `coordinator/destroy`; emitted deepest first, after the `dismissed` of every entry the step removed.
    case destroy(instance: InstanceID, plugin: String, type: String)
    /// `coordinator/dismissed` to the owner of the instance the entry left; emitted top first, an entry after the
    /// entries of the coordinator it held.
    case dismissed(
        instance: InstanceID, plugin: String, entry: EntryID, route: String,
        reason: CoordinatorDismissedNotification.Reason)
    /// `coordinator/tabSelected`.
    case tabSelected(instance: InstanceID, plugin: String, tab: String, isRepeat: Bool)
    /// `coordinator/appeared`: after every other effect of the chain, one per instance at most.
    case appeared(instance: InstanceID, plugin: String, entry: EntryID)
}

/// A chain that applied completely (on its working tree; committing is the caller's business).
public struct ChainResult: Sendable {
    /// The working tree with every step applied (revision not bumped yet).
    public let tree: NavigationTree
    public let landedOn: InstanceID
    /// Whether the tree differs from where the chain started.
    public let changed: Bool
    public let effects: [ChainEffect]
    /// Every instance the chain read or wrote (for optimistic concurrency at commit).
    public let touched: Set<InstanceID>
    /// Instances created by the chain.
    public let created: [InstanceID]
    /// What to destroy if this result is not committed (its commit is refused): every instance the chain created,
    /// those it removed again included, deepest first (children before their parents).
    public let undo: [(instance: InstanceID, plugin: String, type: String)]
    /// Instances removed by the chain (including some it created).
    public let removed: Set<InstanceID>
}

/// A chain that failed. The tree it started from is untouched; the instances it created in plugins must be
/// destroyed.
public struct ChainFailure: Error, Sendable {
    public let error: ResponseError
    /// The instances the chain created, deepest first (children before their parents): the order to destroy them in.
    public let created: [(instance: InstanceID, plugin: String, type: String)]
}

/// Where a chain stands after `advance()`.
public enum ChainOutcome: Sendable {
    case needs(ChainNeed)
    case done(ChainResult)
    case failed(ChainFailure)
}
