/// Every check `check-plugin` runs, with the section of Protocol/README.md it enforces.
///
/// The raw values are the ids `--only` takes and the JSON report carries; they are stable.
public enum CheckID: String, Sendable, CaseIterable, Comparable {
    case handshake
    case versionNegotiation = "version-negotiation"
    case routeTable = "route-table"
    case create
    case route
    case paramTypes = "param-types"
    case deepLink = "deep-link"
    case destroy
    case restore
    case ping
    case unknownMethod = "unknown-method"
    case unknownMembers = "unknown-members"
    case lineLimit = "line-limit"
    case stdout
    case messages
    case shutdown
    case exitWithoutShutdown = "exit-without-shutdown"
    case eof
    case timing

    /// The spec sections it enforces, as the report cites them.
    public var section: String {
        switch self {
        case .handshake: "§3.1, §3.2"
        case .versionNegotiation: "§3.1"
        case .routeTable: "§5, §14"
        case .create: "§8 coordinator/create, §21"
        case .route: "§8 coordinator/route, §12.1, §21"
        case .paramTypes: "§7, §8 coordinator/route"
        case .deepLink: "§13"
        case .destroy: "§8 coordinator/destroy"
        case .restore: "§8 coordinator/create, §16"
        case .ping: "§3.4"
        case .unknownMethod: "§7, §2"
        case .unknownMembers: "§2, §8 initialize"
        case .lineLimit: "§1, §6"
        case .stdout: "§1, §4"
        case .messages: "§2, §9"
        case .shutdown: "§3.5, §3.6"
        case .exitWithoutShutdown: "§3.6"
        case .eof: "§4"
        case .timing: "§15 startupMicroseconds"
        }
    }

    /// What the check asks of the plugin, in one line.
    public var title: String {
        switch self {
        case .handshake: "answers initialize with an offered version, its info and a route table, within startTimeoutMs"
        case .versionNegotiation: "offered only an unknown version, answers -32002 with data.supported"
        case .routeTable: "the route table validates against the schema and composes (§14 rules)"
        case .create: "coordinator/create (reason new) of every type answers content that fits the declaration"
        case .route: "every declared route answers content that fits it (or a guard's -32013), with generated params"
        case .paramTypes: "a declared param of the wrong type is refused with -32602 naming the field"
        case .deepLink: "a link built from every deep-link pattern resolves and its hops are answered"
        case .destroy: "coordinator/destroy of every instance answers {}"
        case .restore:
            "coordinator/create (reason restore) with the instance and its state answers {}; the instance works"
        case .ping: "$/ping is answered while a slow request is in flight"
        case .unknownMethod: "an unknown request gets -32601; an unknown notification is ignored"
        case .unknownMembers: "members it does not know (envelope, params, limits) are ignored"
        case .lineLimit: "reads a line of exactly maxLineBytes; never writes a longer one"
        case .stdout: "stdout carries protocol messages only"
        case .messages:
            "every message validates against the envelope and its method's schema; each request answered once"
        case .shutdown: "shutdown is answered {} without exiting; exit then ends the process with status 0"
        case .exitWithoutShutdown: "exit without shutdown ends the process with status 1"
        case .eof: "the process exits within 2 s of stdin's end of file"
        case .timing: "spawn-to-ready and route round-trip times (reported, never asserted)"
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }
}

/// PASS, FAIL, WARN or SKIP.
public enum CheckStatus: String, Sendable {
    case pass = "PASS"
    /// The plugin breaks a MUST of the spec.
    case fail = "FAIL"
    /// It breaks a SHOULD, or does something the spec allows but a host will handle poorly.
    case warn = "WARN"
    /// Nothing to check (no such routes), or it could not run (an earlier failure ended the process).
    case skip = "SKIP"
}

/// One problem a check found: what happened, what the spec expects, and the exchange that shows it.
public struct Finding: Sendable {
    public let severity: CheckStatus
    public let message: String
    public let expected: String?
    public let exchange: [ExchangeLine]
    /// The plugin's last stderr lines, when they may explain it (a traceback).
    public let stderr: [String]

    init(
        _ severity: CheckStatus, _ message: String, expected: String? = nil, exchange: [ExchangeLine] = [],
        stderr: [String] = []
    ) {
        self.severity = severity
        self.message = message
        self.expected = expected
        self.exchange = exchange
        self.stderr = stderr
    }
}

/// The outcome of one check.
public struct CheckResult: Sendable {
    public let id: CheckID
    public let status: CheckStatus
    /// One line: what was checked and how it went.
    public let summary: String
    public let findings: [Finding]
    /// Measurements (milliseconds), for `timing`.
    public let measurements: [(name: String, milliseconds: Double)]

    init(
        _ id: CheckID, summary: String, findings: [Finding] = [],
        measurements: [(name: String, milliseconds: Double)] = [], skipped: Bool = false
    ) {
        self.id = id
        self.summary = summary
        self.findings = findings
        self.measurements = measurements
        if skipped {
            status = .skip
        } else if findings.contains(where: { $0.severity == .fail }) {
            status = .fail
        } else if findings.contains(where: { $0.severity == .warn }) {
            status = .warn
        } else {
            status = .pass
        }
    }
}
