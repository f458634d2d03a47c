public import SwitchyardProtocol
import SwitchyardSystem
import SwitchyardUV

/// The app description: which plugins to run and how (`switchyard.json`).
///
/// Paths (`command[0]` when it contains a slash, `cwd`) are relative to the manifest's folder. A Swift plugin built
/// by the same package is named by `product` and found next to the running `switchyard` executable (or in
/// `SWITCHYARD_PRODUCTS_DIR`), so no manifest hard-codes `.build/debug`.
public struct Manifest: Codable, Sendable, Equatable {
    /// A display name for the app.
    public var app: String?
    /// The coordinator the tree starts from.
    public var root: CoordinatorReference?
    /// Refuse to start when the composed route tables are inconsistent (default: start without the broken plugins).
    public var strict: Bool?
    public var plugins: [PluginManifest]
    /// Another manifest this one builds on: its plugins are kept, a plugin here with the same name replaces the
    /// inherited one, new names are added; `app`, `root` and `strict` here win. Relative to this manifest.
    public var extends: String?
    /// How `open` treats a link that cannot be applied yet (Protocol/README.md §13.5).
    public var deepLinks: DeepLinkOptions?
    /// Where the manifest was loaded from (not part of the file).
    public var directory: String?
    /// The file it was loaded from (not part of the file): what a reload reads again (spec §20.2).
    public var path: String?
    /// What loading tolerated but a reader should see (unknown keys under `allowUnknownKeys`; not part of the file).
    public var warnings: [ManifestDiagnostic] = []

    public init(
        app: String? = nil, root: CoordinatorReference? = nil, strict: Bool? = nil, plugins: [PluginManifest],
        directory: String? = nil
    ) {
        self.app = app
        self.root = root
        self.strict = strict
        self.plugins = plugins
        self.directory = directory
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case app, root, strict, extends, plugins, deepLinks
    }

    /// `plugins` may be left out (a manifest that only `extends` another, to rename the app or change its root).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        app = try container.decodeIfPresent(String.self, forKey: .app)
        root = try container.decodeIfPresent(CoordinatorReference.self, forKey: .root)
        strict = try container.decodeIfPresent(Bool.self, forKey: .strict)
        extends = try container.decodeIfPresent(String.self, forKey: .extends)
        plugins = try container.decodeIfPresent([PluginManifest].self, forKey: .plugins) ?? []
        deepLinks = try container.decodeIfPresent(DeepLinkOptions.self, forKey: .deepLinks)
    }
}

/// The app's default for deep links that cannot be applied yet (a guard defers them, or they lead through a root
/// that is not active): whether `open` defers them, and for how long (Protocol/README.md §13.5). A request's own
/// `defer` and `deferMs` win.
public struct DeepLinkOptions: Codable, Sendable, Equatable {
    /// `open` defers such links unless the request says `defer: false`. Default false.
    public var `defer`: Bool?
    /// How long a deferred link may wait, in milliseconds (1 to 86,400,000). Default 300,000 (five minutes).
    public var deferMs: Int?

    /// What a deferred link may wait when neither the request nor the manifest says: five minutes, long enough to
    /// sign in (a password manager, a second factor), short enough that a link opened and forgotten does not move
    /// the user an hour later.
    public static let defaultDeferMs = 300_000
    /// The longest a link may wait: a day.
    public static let maxDeferMs = 86_400_000

    enum CodingKeys: String, CodingKey, CaseIterable {
        case `defer`, deferMs
    }

    public init(defer: Bool? = nil, deferMs: Int? = nil) {
        self.defer = `defer`
        self.deferMs = deferMs
    }
}

/// How to run one plugin.
public struct PluginManifest: Codable, Sendable, Equatable {
    /// Unique in the app; other plugins' routes target this name.
    public var name: String
    /// A Swift executable product of this package (e.g. `"TodosPlugin"`).
    public var product: String?
    /// An argv: `["python3", "todos.py"]`. Never run through a shell.
    public var command: [String]?
    /// Extra arguments appended to `product` or `command`.
    public var args: [String]?
    /// Working directory, relative to the manifest. Default: the manifest's folder.
    public var cwd: String?
    /// Variables set in the plugin's environment (on top of a small allow-list from the host's).
    public var env: [String: String]?
    /// Host variables to pass through besides the allow-list.
    public var inheritEnv: [String]?
    /// Overrides of the default limits.
    public var limits: LimitOverrides?
    /// How long the handshake may take, in milliseconds (cold runtimes need more). Default 10 s.
    public var startTimeoutMs: Int?
    /// Restart policy (Erlang-style).
    public var restart: RestartPolicy?
    /// The plugin's route contract file (Protocol/README.md §19), relative to the manifest; default
    /// `contracts/NAME.json` beside it. Only `switchyard contract check` reads it: the host composes what plugins
    /// declare when they start.
    public var contract: String?
    /// `eager` (default): started with the app; `lazy`: started on first need, the app composed from its contract
    /// meanwhile (spec §20.3).
    public var start: StartMode?
    /// Stop the plugin once it has been idle this long (no request, none of its instances on the selected path),
    /// keeping its instances' state, and start it again on need (spec §20.3). Absent: never.
    public var hibernateAfterMs: Int?
    /// The most state the host keeps for a hibernated plugin's instances (default 1 MiB): a plugin whose instances
    /// hold more keeps running.
    public var maxHibernatedStateBytes: Int?
    /// The folder of the manifest that declared this plugin, which its relative paths start from (not part of the
    /// file: set on load, so plugins inherited through `extends` keep their own manifest's folder).
    public var directory: String?
    /// Where the entry's `command` (or `product`) is written, `file:line:column` (not part of the file: set on load),
    /// so a plugin that cannot be started is reported at the place to fix.
    public var commandLocation: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case name, product, command, args, cwd, env, inheritEnv, limits, startTimeoutMs, restart, contract
        case start, hibernateAfterMs, maxHibernatedStateBytes
    }

    /// When a plugin starts.
    public enum StartMode: String, Codable, Sendable {
        /// With the app.
        case eager
        /// On first need: a route, a link, a tab or a restore that needs it.
        case lazy
    }

    /// The default of `maxHibernatedStateBytes`: 1 MiB, Android's binder bound on saved instance state.
    public static let defaultMaxHibernatedStateBytes = 1 << 20

    /// Whether a change from `old` to this entry needs a new process (what the plugin is started with or is told
    /// in `initialize`); other fields apply to the running one (spec §20.2).
    public func needsNewProcess(comparedTo old: PluginManifest) -> Bool {
        product != old.product || command != old.command || args != old.args || cwd != old.cwd || env != old.env
            || inheritEnv != old.inheritEnv || limits != old.limits || startTimeoutMs != old.startTimeoutMs
            || directory != old.directory
    }

    /// Where its contract file is: `contract`, else `contracts/NAME.json`, relative to the folder of the manifest that
    /// declares the entry (an entry inherited through `extends` keeps its own manifest's folder).
    public var contractPath: String {
        let path = contract ?? "contracts/\(name).json"
        return path.hasPrefix("/") ? path : "\(directory ?? ".")/\(path)"
    }

    public init(
        name: String, product: String? = nil, command: [String]? = nil, args: [String]? = nil, cwd: String? = nil,
        env: [String: String]? = nil, inheritEnv: [String]? = nil, limits: LimitOverrides? = nil,
        startTimeoutMs: Int? = nil, restart: RestartPolicy? = nil, start: StartMode? = nil,
        hibernateAfterMs: Int? = nil, maxHibernatedStateBytes: Int? = nil
    ) {
        self.start = start
        self.hibernateAfterMs = hibernateAfterMs
        self.maxHibernatedStateBytes = maxHibernatedStateBytes
        self.name = name
        self.product = product
        self.command = command
        self.args = args
        self.cwd = cwd
        self.env = env
        self.inheritEnv = inheritEnv
        self.limits = limits
        self.startTimeoutMs = startTimeoutMs
        self.restart = restart
    }
}

/// Per-plugin limit overrides; absent fields keep the defaults of ``PluginLimits``.
public struct LimitOverrides: Codable, Sendable, Equatable {
    public var maxLineBytes: Int?
    public var maxMessagesPerSecond: Int?
    public var maxOutstandingRequests: Int?
    public var maxInstances: Int?
    public var maxStderrBytesPerSecond: Int?
    public var requestTimeoutMs: Int?
    public var heartbeatIntervalMs: Int?
    public var heartbeatTimeoutMs: Int?
    public var maxProtocolErrors: Int?
    /// Bytes the host may queue towards a plugin that is not reading before it counts as hung.
    public var maxWriteQueueBytes: Int?

    public init() {}

    /// Spelled out (not synthesized) so the manifest's key check knows them.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case maxLineBytes, maxMessagesPerSecond, maxOutstandingRequests, maxInstances, maxStderrBytesPerSecond
        case requestTimeoutMs, heartbeatIntervalMs, heartbeatTimeoutMs, maxProtocolErrors, maxWriteQueueBytes
    }

    func applied(to base: PluginLimits) -> PluginLimits {
        var limits = base
        if let maxLineBytes { limits.maxLineBytes = maxLineBytes }
        if let maxMessagesPerSecond { limits.maxMessagesPerSecond = maxMessagesPerSecond }
        if let maxOutstandingRequests { limits.maxOutstandingRequests = maxOutstandingRequests }
        if let maxInstances { limits.maxInstances = maxInstances }
        if let maxStderrBytesPerSecond { limits.maxStderrBytesPerSecond = maxStderrBytesPerSecond }
        if let requestTimeoutMs { limits.requestTimeoutMs = requestTimeoutMs }
        if let heartbeatIntervalMs { limits.heartbeatIntervalMs = heartbeatIntervalMs }
        if let heartbeatTimeoutMs { limits.heartbeatTimeoutMs = heartbeatTimeoutMs }
        if let maxProtocolErrors { limits.maxProtocolErrors = maxProtocolErrors }
        return limits
    }
}

/// Erlang/OTP restart types plus an intensity window.
public struct RestartPolicy: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// Always restarted.
        case permanent
        /// Restarted only after an abnormal exit.
        case transient
        /// Never restarted.
        case temporary
    }

    public var policy: Kind
    /// At most this many restarts within ``windowSeconds``; then the plugin is marked failed.
    public var maxRestarts: Int?
    public var windowSeconds: Double?
    /// Backoff before the second restart within the window (the first is immediate); doubles for each further
    /// one up to ``maxBackoffMs``, with ±20 % jitter so plugins that crashed together do not restart in lockstep.
    public var backoffMs: Int?
    public var maxBackoffMs: Int?

    /// Spelled out (not synthesized) so the manifest's key check knows them.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case policy, maxRestarts, windowSeconds, backoffMs, maxBackoffMs
    }

    /// Defaults: at most 5 restarts within 30 s; backoff 100 ms doubling up to 5 s.
    public var effectiveMaxRestarts: Int { maxRestarts ?? 5 }
    public var effectiveWindowMs: UInt64 { UInt64(max(0, (windowSeconds ?? 30) * 1_000)) }
    public var effectiveBackoffMs: Int { backoffMs ?? 100 }
    public var effectiveMaxBackoffMs: Int { maxBackoffMs ?? 5_000 }

    public init(
        policy: Kind, maxRestarts: Int? = nil, windowSeconds: Double? = nil, backoffMs: Int? = nil,
        maxBackoffMs: Int? = nil
    ) {
        self.policy = policy
        self.maxRestarts = maxRestarts
        self.windowSeconds = windowSeconds
        self.backoffMs = backoffMs
        self.maxBackoffMs = maxBackoffMs
    }

    public static let `default` = RestartPolicy(policy: .permanent)
}

// MARK: - Resolution

/// Where Swift products built by this package live: `SWITCHYARD_PRODUCTS_DIR`, else the folder of the running
/// executable (`swift run switchyard` and `swift test` both put every product there).
public func defaultProductsDirectory() -> String {
    if let override = SystemProcess.environmentValue("SWITCHYARD_PRODUCTS_DIR"), !override.isEmpty { return override }
    guard let executable = SystemProcess.executablePath else { return FileSystem.currentDirectory }
    return FileSystem.parentDirectory(of: executable)
}

/// A plugin's manifest entry turned into concrete spawn options.
struct ResolvedPlugin: Sendable {
    let manifest: PluginManifest
    let spawn: UVSpawnOptions
    let limits: PluginLimits
    let maxWriteQueueBytes: Int
    let startTimeoutMs: Int
    let restart: RestartPolicy

    var name: String { manifest.name }
}

/// Host variables every plugin gets when set: what locale, temp files and runtimes (pyenv, swift) need to start.
let environmentAllowList = [
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "PYENV_ROOT", "PYENV_VERSION",
    "SWIFT_BACKTRACE",
]

extension PluginManifest {
    func resolve(
        manifestDirectory: String, productsDirectory: String, hostEnvironment: [String: String]
    )
        throws(ManifestError) -> ResolvedPlugin
    {
        let base = directory ?? manifestDirectory
        func absolute(_ path: String) -> String {
            if path.hasPrefix("/") { return path }
            return "\(base)/\(path.hasPrefix("./") ? String(path.dropFirst(2)) : path)"
        }
        let executable: String
        var arguments: [String] = []
        let place = commandLocation ?? "plugin '\(name)'"
        if let product {
            executable = "\(productsDirectory)/\(product)"
            guard FileSystem.isExecutable(executable) else {
                throw ManifestError(
                    path: place,
                    message:
                        "plugin '\(name)': product '\(product)' not found in \(productsDirectory) (build it with `swift build --product \(product)`)"
                )
            }
        } else if let command, let first = command.first {
            if first.contains("/") {
                executable = absolute(first)
            } else if let found = FileSystem.findExecutable(first, path: hostEnvironment["PATH"]) {
                executable = found
            } else {
                throw ManifestError(
                    path: place,
                    message: "plugin '\(name)': '\(first)' is not in the PATH (\(hostEnvironment["PATH"] ?? "unset"))")
            }
            if let problem = ExecutablePreflight.problem(executable, searchPath: hostEnvironment["PATH"]) {
                throw ManifestError(path: place, message: "plugin '\(name)' cannot be started: \(problem)")
            }
            arguments = Array(command.dropFirst())
        } else {
            throw ManifestError(path: "plugin '\(name)'", message: "needs 'product' or 'command'")
        }
        arguments += args ?? []

        let environment = Manifest.pluginEnvironment(
            name: name, inheritEnv: inheritEnv ?? [], env: env ?? [:], hostEnvironment: hostEnvironment)

        let limits = (self.limits ?? LimitOverrides()).applied(to: .defaults)
        let options = UVSpawnOptions(
            executable: executable, arguments: arguments, environment: environment,
            workingDirectory: absolute(cwd ?? "."), newProcessGroup: true)
        return ResolvedPlugin(
            manifest: self, spawn: options, limits: limits,
            maxWriteQueueBytes: self.limits?.maxWriteQueueBytes ?? 8 << 20,
            startTimeoutMs: startTimeoutMs ?? 10_000, restart: restart ?? .default)
    }
}

/// A manifest entry as the host would start it, for tools that start one plugin on their own (`check-plugin`).
public struct PluginLaunchSpec: Sendable {
    /// The program and its arguments (argv).
    public let command: [String]
    /// The explicit environment the host would give it (§4).
    public let environment: [String: String]
    public let workingDirectory: String?
    public let limits: PluginLimits
    public let startTimeoutMs: Int
}

extension Manifest {
    /// The entry named `name`, resolved exactly as the host resolves it when it starts the app.
    public func launchSpec(
        plugin name: String, productsDirectory: String? = nil
    ) throws(ManifestError) -> PluginLaunchSpec {
        guard let entry = plugins.first(where: { $0.name == name }) else {
            throw ManifestError(
                path: directory ?? ".",
                message: "no plugin named '\(name)' (plugins: \(plugins.map(\.name).joined(separator: ", ")))")
        }
        let resolved = try entry.resolve(
            manifestDirectory: directory ?? FileSystem.currentDirectory,
            productsDirectory: productsDirectory ?? defaultProductsDirectory(),
            hostEnvironment: SystemProcess.environment)
        return PluginLaunchSpec(
            command: [resolved.spawn.executable] + resolved.spawn.arguments, environment: resolved.spawn.environment,
            workingDirectory: resolved.spawn.workingDirectory, limits: resolved.limits,
            startTimeoutMs: resolved.startTimeoutMs)
    }

    /// The explicit environment the host gives a plugin (§4): the host variables it passes on, those `inheritEnv`
    /// names, `env`, and the `SWITCHYARD_*` variables for `name`. Nil `hostEnvironment`: this process's.
    public static func pluginEnvironment(
        name: String, inheritEnv: [String] = [], env: [String: String] = [:], hostEnvironment: [String: String]? = nil
    ) -> [String: String] {
        let host = hostEnvironment ?? SystemProcess.environment
        var environment: [String: String] = [:]
        for key in environmentAllowList + inheritEnv {
            if let value = host[key] { environment[key] = value }
        }
        for (key, value) in env { environment[key] = value }
        environment["SWITCHYARD_PLUGIN_NAME"] = name
        environment["SWITCHYARD_PROTOCOL_VERSIONS"] = ProtocolVersion.supported.map(String.init).joined(separator: ",")
        environment["SWITCHYARD_HOST_PID"] = String(SystemProcess.currentPID)
        return environment
    }
}
