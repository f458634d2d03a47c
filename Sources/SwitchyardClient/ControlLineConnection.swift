import SwitchyardProtocol
import SwitchyardSystem
import Synchronization

/// A connection to a host's control socket that moves lines as bytes, for a relay that must pass the host's lines on
/// exactly as written: the studio forwards each to a browser, where a `trace/event` carries a plugin's message byte
/// for byte (Protocol/README.md §15.1). The same socket checks as ``ControlClient`` (the server must run as this user).
///
/// Blocking: ``nextLine()`` belongs on a thread of its own, never on the Swift-concurrency pool. When the reader
/// stops calling it, the host's bounded queue for this client fills and the host disconnects it (§15): a slow relay
/// costs the host no more than that.
public final class ControlLineConnection: Sendable {
    private let socket: UnixSocket
    private let path: String
    private let framer: Mutex<LineFramer>

    /// Connects to the host listening at `path`, refusing a server that runs as another user.
    public init(path: String, maxLineLength: Int = ControlClient.maxLineLength) throws(ControlClient.Failure) {
        self.path = path
        do { socket = try UnixSocket(connectingTo: path) } catch { throw .unreachable(path, error) }
        framer = Mutex(LineFramer(maxLineLength: maxLineLength))
    }

    deinit { socket.close() }

    /// Sends one line (a newline is added when missing).
    public func send(_ line: [UInt8]) throws(ControlClient.Failure) {
        var bytes = line
        if bytes.last != 0x0A { bytes.append(0x0A) }
        do { try socket.write(bytes) } catch { throw .connection("cannot write to \(path): \(error)") }
    }

    /// The next line from the host, without its newline; nil once the host has closed the connection. Blocks.
    public func nextLine() throws(ControlClient.Failure) -> [UInt8]? {
        while true {
            let event = framer.withLock { $0.next() }
            switch event {
            case .line(let line, _)?: return Array(line)
            case .lineTooLong?: throw .protocolViolation("the host at \(path) sent a line over the limit")
            case nil: break
            }
            let bytes: [UInt8]
            do { bytes = try socket.read() } catch { throw .connection("cannot read from \(path): \(error)") }
            if bytes.isEmpty { return nil }
            framer.withLock { $0.append(bytes) }
        }
    }

    /// Ends the connection (the host sees end of stream); a reader blocked in ``nextLine()`` gets nil.
    public func close() { socket.shutdown() }
}
