/// A named rule of contract comparison (Protocol/README.md §19.3): each kind of change between two versions of a
/// contract, breaking or compatible, with a one-line meaning. The spec gives an example pair for each; a test keeps
/// the two lists equal.
public enum ContractRule: String, Sendable, CaseIterable, CustomStringConvertible {
    // Breaking: a module, a UI shell or a saved tree that relied on the old version fails with the new one.
    case protocolVersionChanged = "PROTOCOL_VERSION_CHANGED"
    case typeRemoved = "TYPE_REMOVED"
    case typeKindChanged = "TYPE_KIND_CHANGED"
    case routeRemoved = "ROUTE_REMOVED"
    case tabRemoved = "TAB_REMOVED"
    case routeTransitionChanged = "ROUTE_TRANSITION_CHANGED"
    case routeTransitionsNarrowed = "ROUTE_TRANSITIONS_NARROWED"
    case routeTargetChanged = "ROUTE_TARGET_CHANGED"
    case deepLinkRemoved = "DEEP_LINK_REMOVED"
    case deepLinkNarrowed = "DEEP_LINK_NARROWED"
    case customDeepLinksRemoved = "CUSTOM_DEEP_LINKS_REMOVED"
    case actionRemoved = "ACTION_REMOVED"
    case paramsDeclared = "PARAMS_DECLARED"
    case paramRequiredAdded = "PARAM_REQUIRED_ADDED"
    case paramRemoved = "PARAM_REMOVED"
    case paramTypeChanged = "PARAM_TYPE_CHANGED"
    case paramMadeRequired = "PARAM_MADE_REQUIRED"
    case referenceUnresolved = "REFERENCE_UNRESOLVED"
    case referenceIncompatible = "REFERENCE_INCOMPATIBLE"
    // Compatible: everything that relied on the old version still works.
    case typeAdded = "TYPE_ADDED"
    case routeAdded = "ROUTE_ADDED"
    case tabAdded = "TAB_ADDED"
    case tabsReordered = "TABS_REORDERED"
    case initialRouteChanged = "INITIAL_ROUTE_CHANGED"
    case routeTransitionsWidened = "ROUTE_TRANSITIONS_WIDENED"
    case deepLinkAdded = "DEEP_LINK_ADDED"
    case deepLinkWidened = "DEEP_LINK_WIDENED"
    case deepLinkRewritten = "DEEP_LINK_REWRITTEN"
    case customDeepLinksAdded = "CUSTOM_DEEP_LINKS_ADDED"
    case actionAdded = "ACTION_ADDED"
    case paramsUndeclared = "PARAMS_UNDECLARED"
    case paramOptionalAdded = "PARAM_OPTIONAL_ADDED"
    case paramMadeOptional = "PARAM_MADE_OPTIONAL"
    case paramTypeWidened = "PARAM_TYPE_WIDENED"
    case targetParamsChanged = "TARGET_PARAMS_CHANGED"

    public var description: String { rawValue }

    /// Whether a change of this kind can break what relied on the old version (`contract diff` fails on it unless
    /// it is allowed with `--allow`).
    public var isBreaking: Bool {
        switch self {
        case .protocolVersionChanged, .typeRemoved, .typeKindChanged, .routeRemoved, .tabRemoved,
            .routeTransitionChanged,
            .routeTransitionsNarrowed, .routeTargetChanged, .deepLinkRemoved, .deepLinkNarrowed,
            .customDeepLinksRemoved,
            .actionRemoved, .paramsDeclared, .paramRequiredAdded, .paramRemoved, .paramTypeChanged, .paramMadeRequired,
            .referenceUnresolved, .referenceIncompatible:
            true
        case .typeAdded, .routeAdded, .tabAdded, .tabsReordered, .initialRouteChanged, .routeTransitionsWidened,
            .deepLinkAdded,
            .deepLinkWidened, .deepLinkRewritten, .customDeepLinksAdded, .actionAdded, .paramsUndeclared,
            .paramOptionalAdded,
            .paramMadeOptional, .paramTypeWidened, .targetParamsChanged:
            false
        }
    }

    /// What the rule means, in one line.
    public var meaning: String {
        switch self {
        case .protocolVersionChanged: "the plugin speaks another protocol version: hosts that do not offer it refuse it"
        case .typeRemoved: "a coordinator type is gone: every route, manifest root and saved tree that opens it fails"
        case .typeKindChanged:
            "a type is another kind (stack, tabs, wrapper): steps and pushes that fit the old kind fail"
        case .routeRemoved: "a route is gone: chains and links that take it fail with routeNotFound"
        case .tabRemoved: "a tab is gone: selectTab, setTabs and links that name it fail"
        case .routeTransitionChanged: "a route presents another way by default (push, modal, fullScreen...)"
        case .routeTransitionsNarrowed: "a transition a route step could pick is no longer allowed"
        case .routeTargetChanged: "a route opens another coordinator type, or a screen instead of one (or the reverse)"
        case .deepLinkRemoved: "a route no longer has a deep-link pattern: its links fail"
        case .deepLinkNarrowed:
            "a pattern matches less: some links it took fail (another literal, a capture made literal, '**' dropped)"
        case .customDeepLinksRemoved:
            "the plugin no longer resolves links into the type itself: links beyond its patterns fail"
        case .actionRemoved: "an action a screen emitted is gone: a UI shell's user/action for it is refused"
        case .paramsDeclared: "params are declared where any were accepted: callers passing others are refused"
        case .paramRequiredAdded: "a new required param: callers that do not pass it are refused"
        case .paramRemoved: "a declared param is gone: callers that pass it are refused (unknown param)"
        case .paramTypeChanged: "a param has another type: values of the old type are refused"
        case .paramMadeRequired: "an optional param became required: callers that leave it out are refused"
        case .referenceUnresolved: "a module's route opens a type the other module's contract does not declare"
        case .referenceIncompatible:
            "a module's route opens a type of the other module in a way it no longer accepts (params, kind)"
        case .typeAdded: "a new coordinator type"
        case .routeAdded: "a new route"
        case .tabAdded: "a new tab"
        case .tabsReordered: "the tabs are shown in another order"
        case .initialRouteChanged: "a new instance starts on another root or tab; instances that exist keep theirs"
        case .routeTransitionsWidened: "a route step may pick more transitions"
        case .deepLinkAdded: "a route gets a deep-link pattern"
        case .deepLinkWidened: "a pattern matches every link it matched and more"
        case .deepLinkRewritten: "a pattern is written differently but matches the same links (a capture renamed)"
        case .customDeepLinksAdded:
            "the plugin resolves links into the type itself (its patterns still describe what it promises)"
        case .actionAdded: "a screen emits a new action"
        case .paramsUndeclared: "a params declaration is dropped: any params are accepted"
        case .paramOptionalAdded: "a new optional param"
        case .paramMadeOptional: "a required param became optional"
        case .paramTypeWidened: "a param accepts more values (any, or number for integer)"
        case .targetParamsChanged:
            "a route creates the coordinator it opens with other params (checked against that module by contract check)"
        }
    }
}
