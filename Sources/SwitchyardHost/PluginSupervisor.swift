import Logging
public import SwitchyardProtocol
import SwitchyardUV

/// A plugin's state as the host reports it.
public enum PluginState: Sendable, Equatable, CustomStringConvertible {
    /// Spawned, handshake in progress.
    case starting
    /// Handshake done; serving requests.
    case ready
    /// Waiting before a restart (backoff).
    case restarting
    /// Stopping (shutdown ladder).
    case stopping
    /// Stopped on purpose, or exited and not restarted by policy.
    case stopped
    /// Gave up: the handshake failed, it was excluded by the composition check, or it restarted too often.
    case failed

    public var description: String {
        switch self {
        case .starting: "starting"
        case .ready: "ready"
        case .restarting: "restarting"
        case .stopping: "stopping"
        case .stopped: "stopped"
        case .failed: "failed"
        }
    }
}

/// A snapshot of one plugin for status displays and tests.
public struct PluginStatus: Sendable, Equatable {
    public let name: String
    public let state: PluginState
    public let pid: Int32?
    /// Why the plugin is failed or unavailable, as a typed error.
    public let error: ResponseError?
    public let restarts: Int
    public let version: String?
    /// Spawn to handshake done, in microseconds, for the last start.
    public let startupMicroseconds: UInt64?
}

/// Owns one plugin's process over its lifetime: spawn, handshake, stop (and, with a restart policy, restarts).
///
/// - Important: Loop thread only.
final class PluginSupervisor {
    let plugin: ResolvedPlugin
    private let loop: UVLoop
    private let logger: Logger
    private weak var guardian: Guardian?
    private(set) var connection: PluginConnection?
    private(set) var state = PluginState.starting
    private(set) var lastError: ResponseError?
    private(set) var restarts = 0
    private(set) var routeTable: InitializeRequest.Result?
    private var stopping = false

    /// Called whenever ``state`` changes.
    var onStateChange: (PluginSupervisor) -> Void = { _ in }
    /// Requests and notifications from the plugin, for the navigator.
    var onRequest: (PluginSupervisor, RequestID, String, JSONValue?) -> Void = { _, _, _, _ in }
    var onNotification: (PluginSupervisor, String, JSONValue?) -> Void = { _, _, _ in }

    var name: String { plugin.name }

    init(plugin: ResolvedPlugin, loop: UVLoop, logger: Logger, guardian: Guardian?) {
        self.plugin = plugin
        self.loop = loop
        self.logger = logger
        self.guardian = guardian
    }

    var status: PluginStatus {
        let startup: UInt64? = connection.flatMap { $0.readyAt > 0 ? ($0.readyAt - $0.spawnedAt) / 1_000 : nil }
        return PluginStatus(
            name: name, state: state, pid: connection.map(\.pid).flatMap { $0 > 0 ? $0 : nil }, error: lastError,
            restarts: restarts, version: routeTable?.plugin.version, startupMicroseconds: startup)
    }

    func start() {
        let connection = PluginConnection(plugin: plugin, loop: loop, logger: logger)
        self.connection = connection
        connection.onEvent = { [weak self, weak connection] event in
            guard let self, let connection, connection === self.connection else { return }
            self.handle(event, from: connection)
        }
        setState(.starting)
        connection.start(guardian: guardian)
    }

    private func handle(_ event: PluginConnection.Event, from connection: PluginConnection) {
        switch event {
        case .ready(let table):
            routeTable = table
            lastError = nil
            setState(.ready)
        case .handshakeFailed(let error):
            lastError = error
        case .request(let id, let method, let params):
            onRequest(self, id, method, params)
        case .notification(let method, let params):
            onNotification(self, method, params)
        case .violation:
            break
        case .requestTimedOut:
            break
        case .terminated(let termination):
            if connection.pid > 0 { guardian?.release(processGroup: connection.pid) }
            if state == .failed {
                onStateChange(self)  // still failed; the process is gone now
            } else if stopping {
                setState(.stopped)
            } else if state == .starting {
                setState(.failed)
            } else {
                lastError = .pluginUnavailable(name, "\(termination)")
                setState(termination.isAbnormal ? .failed : .stopped)
            }
        }
    }

    private func setState(_ new: PluginState) {
        guard new != state || new == .starting else { return }
        state = new
        onStateChange(self)
    }

    /// Stops the plugin with the shutdown ladder; `.stopped` follows.
    func stop(graceMs: Int) {
        stopping = true
        guard let connection, connection.state != .terminated else {
            setState(.stopped)
            return
        }
        setState(.stopping)
        connection.stop(graceMs: graceMs)
    }

    /// Marks the plugin failed without a process (e.g. excluded by the composition check).
    func fail(_ error: ResponseError) {
        lastError = error
        stopping = true
        connection?.kill(reason: error.message)
        setState(.failed)
    }
}
