/// A JSON-RPC error code. An open set (LSP's shape): codes this build does not know still decode.
///
/// JSON-RPC reserves -32768…-32000; Switchyard's own codes live in the implementation range -32000…-32099.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    // MARK: JSON-RPC 2.0
    /// The line is not valid JSON (or not valid UTF-8).
    public static let parseError = ErrorCode(rawValue: -32700)
    /// Valid JSON, but not a valid JSON-RPC message.
    public static let invalidRequest = ErrorCode(rawValue: -32600)
    public static let methodNotFound = ErrorCode(rawValue: -32601)
    /// A field of `params` is missing or of the wrong type; `data.field` names it.
    public static let invalidParams = ErrorCode(rawValue: -32602)
    public static let internalError = ErrorCode(rawValue: -32603)

    // MARK: Switchyard: transport and lifecycle
    /// A request was not answered in time.
    public static let timeout = ErrorCode(rawValue: -32000)
    /// A request other than `initialize` arrived before the handshake completed.
    public static let notInitialized = ErrorCode(rawValue: -32001)
    /// No protocol version is spoken by both sides; `data.supported` lists the host's.
    public static let unsupportedProtocolVersion = ErrorCode(rawValue: -32002)
    /// The plugin that owns the target is starting, restarting, failed or excluded.
    public static let pluginUnavailable = ErrorCode(rawValue: -32003)
    /// A per-plugin limit (line length, rate, outstanding requests, instances, queue bytes) was exceeded.
    public static let limitExceeded = ErrorCode(rawValue: -32004)
    /// The host is shutting down.
    public static let shuttingDown = ErrorCode(rawValue: -32005)
    /// A plugin's answer contradicts its route table or the tree (wrong content kind, unknown type, ...).
    public static let invalidAnswer = ErrorCode(rawValue: -32006)
    /// The control client is not allowed (peer uid differs from the host's).
    public static let unauthorized = ErrorCode(rawValue: -32007)

    // MARK: Switchyard: navigation
    /// No route (or tab) of that name on that coordinator, or `focusFirst` found no match.
    public static let routeNotFound = ErrorCode(rawValue: -32010)
    /// The operation is not allowed here: pop at root, dismiss a root, push onto tabs, a transition the route does
    /// not declare.
    public static let notAllowed = ErrorCode(rawValue: -32011)
    /// A plugin tried to change an instance it does not own.
    public static let notOwner = ErrorCode(rawValue: -32012)
    /// The owning plugin's guard rejected the route.
    public static let rejectedByGuard = ErrorCode(rawValue: -32013)
    /// A deep link does not match; `data.segment` and `data.index` say where.
    public static let deepLinkInvalid = ErrorCode(rawValue: -32014)
    /// No coordinator instance (or entry) with that id.
    public static let instanceNotFound = ErrorCode(rawValue: -32015)
    /// The instances a chain read were changed by another request meanwhile (after retries).
    public static let conflict = ErrorCode(rawValue: -32016)
    /// The composed route tables are inconsistent (reported at start-up).
    public static let compositionError = ErrorCode(rawValue: -32017)

    /// A stable name for logs and the CLI, e.g. `routeNotFound`.
    public var name: String {
        switch self {
        case .parseError: "parseError"
        case .invalidRequest: "invalidRequest"
        case .methodNotFound: "methodNotFound"
        case .invalidParams: "invalidParams"
        case .internalError: "internalError"
        case .timeout: "timeout"
        case .notInitialized: "notInitialized"
        case .unsupportedProtocolVersion: "unsupportedProtocolVersion"
        case .pluginUnavailable: "pluginUnavailable"
        case .limitExceeded: "limitExceeded"
        case .shuttingDown: "shuttingDown"
        case .invalidAnswer: "invalidAnswer"
        case .unauthorized: "unauthorized"
        case .routeNotFound: "routeNotFound"
        case .notAllowed: "notAllowed"
        case .notOwner: "notOwner"
        case .rejectedByGuard: "rejectedByGuard"
        case .deepLinkInvalid: "deepLinkInvalid"
        case .instanceNotFound: "instanceNotFound"
        case .conflict: "conflict"
        case .compositionError: "compositionError"
        default: "error"
        }
    }

    /// Every code Switchyard defines, for the spec and its tests.
    public static let all: [ErrorCode] = [
        .parseError, .invalidRequest, .methodNotFound, .invalidParams, .internalError, .timeout, .notInitialized,
        .unsupportedProtocolVersion, .pluginUnavailable, .limitExceeded, .shuttingDown, .invalidAnswer,
        .unauthorized, .routeNotFound, .notAllowed, .notOwner, .rejectedByGuard, .deepLinkInvalid,
        .instanceNotFound, .conflict, .compositionError,
    ]

    public var description: String { "\(rawValue) \(name)" }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
