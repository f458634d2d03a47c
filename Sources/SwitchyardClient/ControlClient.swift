public import SwitchyardProtocol
import SwitchyardSystem

/// A blocking client of a running host's control socket (Protocol/README.md §15): what `switchyard open`, `tree`
/// and `watch` use, and what a test or a tool can use to drive an app from outside. Needs no libuv (only
/// SwitchyardProtocol and a few socket syscalls), so a tool that only talks to a host builds without libuv1-dev.
///
/// One request at a time, on the caller's thread; notifications that arrive while waiting for a response are kept
/// for ``nextNotification()``. Ids and the matching of answers are ``RPCEndpoint``'s. For concurrent calls from
/// async code, use ``AsyncControlClient``.
public final class ControlClient {
    /// Why a call did not produce a result.
    public enum Failure: Error, CustomStringConvertible, Sendable, Equatable {
        /// The host answered with a typed error.
        case response(ResponseError)
        /// The socket could not be reached, or broke.
        case connection(String)
        /// The host sent something that is not a valid message.
        case protocolViolation(String)
        /// No answer within the timeout.
        case timeout(String)

        public var description: String {
            switch self {
            case .response(let error): error.description
            case .connection(let message), .protocolViolation(let message), .timeout(let message): message
            }
        }

        /// A typed request's failure in the client's terms.
        static func typed(_ failure: RPCFailure) -> Failure {
            switch failure {
            case .response(let error): .response(error)
            case .unencodable(let method, let reason):
                .protocolViolation("cannot encode the params of \(method): \(reason)")
            case .undecodable(let method, let reason):
                .protocolViolation("the host's answer to \(method) does not decode: \(reason)")
            }
        }

        /// A failure to connect, with a hint when nothing listens at `path`.
        static func unreachable(_ path: String, _ error: SystemError) -> Failure {
            guard error.isNotFound || error.isConnectionRefused else {
                return .connection("cannot reach the host at \(path): \(error)")
            }
            return .connection(
                "no host is listening at \(path) (\(error.name)): is `switchyard run` running? "
                    + "Start it, or reach another host with --app NAME (its manifest's \"app\") or --socket PATH")
        }
    }

    /// The longest line a client reads from the host: a snapshot of a very large tree, with room to spare. One limit
    /// for ``ControlClient``, ``AsyncControlClient`` and ``ControlLineConnection``.
    public static let maxLineLength = 64 << 20

    private let socket: UnixSocket
    private let path: String
    private var reader = MessageReader(maxLineLength: ControlClient.maxLineLength)
    private let endpoint = RPCEndpoint()
    /// A write error from the endpoint's `send`, which cannot throw; checked after each request leaves.
    private var writeFailure: Failure?
    private var pending: [(method: String, params: JSONValue?)] = []
    /// How long one read may block; `-1` waits forever (`watch`).
    public var timeoutMilliseconds: Int32

    /// Connects to the host listening at `path`, refusing a server that runs as another user.
    public init(path: String, timeoutMilliseconds: Int32 = 30_000) throws(Failure) {
        self.path = path
        self.timeoutMilliseconds = timeoutMilliseconds
        do { socket = try UnixSocket(connectingTo: path) } catch { throw .unreachable(path, error) }
        endpoint.send = { [unowned self] line in
            do throws(Failure) { try self.sendRaw(line) } catch { self.writeFailure = error }
        }
    }

    deinit { socket.close() }

    /// Whether something accepts connections at `path` (a stale socket file does not), whoever runs it.
    public static func isListening(_ path: String) -> Bool {
        guard let socket = try? UnixSocket(connectingTo: path, requireSameUser: false) else { return false }
        socket.close()
        return true
    }

    /// Sends text as it is (tests use it to send garbage).
    public func sendRaw(_ text: String) throws(Failure) { try sendRaw(Array(text.utf8)) }

    /// Sends bytes as they are.
    public func sendRaw(_ bytes: [UInt8]) throws(Failure) {
        do { try socket.write(bytes) } catch { throw .connection("cannot write to \(path): \(error)") }
    }

    /// Sends a typed request and decodes its result.
    public func call<R: ControlRequest>(_: R.Type, _ params: R.Params) throws(Failure) -> R.Result {
        let encoded: JSONValue
        do { encoded = try Coding.encode(params) } catch {
            throw .typed(.unencodable(method: R.method, reason: "\(error)"))
        }
        let raw = try response(R.method, encoded)
        switch RPCEndpoint.decode(R.self, raw) {
        case .success(let result): return result
        case .failure(let failure): throw .typed(failure)
        }
    }

    /// Sends a request and returns its raw result.
    public func call(_ method: String, _ params: JSONValue? = nil) throws(Failure) -> JSONValue {
        switch try response(method, params) {
        case .success(let result): return result
        case .failure(let error): throw .response(error)
        }
    }

    /// Sends a request and returns the host's answer, result or typed error; throws only when there is no answer.
    public func response(
        _ method: String, _ params: JSONValue? = nil
    ) throws(Failure) -> Result<JSONValue, ResponseError> {
        var answer: Result<JSONValue, ResponseError>?
        writeFailure = nil
        let id = endpoint.request(method, params: params) { answer = $0 }
        if let failure = writeFailure {
            endpoint.cancel(id)
            // The host may have refused the connection before reading anything (-32007 unauthorized): its error
            // is waiting in the socket and says more than the broken pipe.
            if case .errorResponse(nil, let refusal)? = try? next() { return .failure(refusal) }
            throw failure
        }
        while answer == nil {
            let message: Message
            do { message = try next() } catch {
                endpoint.cancel(id)
                throw error
            }
            switch message {
            case .notification(let method, let params):
                pending.append((method, params))
            case .request:
                continue  // the host sends clients no requests; nothing to answer
            case .response, .errorResponse:
                // One request at a time, so an error the host could not attribute (a parse error, a refusal) is
                // this request's.
                if case .unattributedError(let error) = endpoint.receive(message) { endpoint.cancel(id, error: error) }
            }
        }
        return answer ?? .failure(ResponseError(.internalError, "no answer"))
    }

    /// The next notification (kept from earlier waits first).
    public func nextNotification() throws(Failure) -> (method: String, params: JSONValue?) {
        if !pending.isEmpty { return pending.removeFirst() }
        while true {
            if case .notification(let method, let params) = try next() { return (method, params) }
        }
    }

    /// The params of the next notification of `method`, skipping others.
    public func nextNotification(_ method: String) throws(Failure) -> JSONValue? {
        while true {
            let notification = try nextNotification()
            if notification.method == method { return notification.params }
        }
    }

    /// The next message of any kind, as read (not matched to requests: for tests that speak raw lines).
    public func next() throws(Failure) -> Message {
        switch nextResult() {
        case .success(let message): return message
        case .failure(let failure): throw failure
        }
    }

    // A Result rather than a typed throw of a payload enum: Swift 6.3's optimizer miscompiled the typed-throwing
    // version (a release build destroyed the returned Message twice and crashed every client command).
    private func nextResult() -> Result<Message, Failure> {
        while true {
            if let event = reader.next() {
                switch event {
                case .message(let message, _): return .success(message)
                case .violation(let violation):
                    return .failure(.protocolViolation("the host sent an invalid message: \(violation)"))
                }
            }
            let bytes: [UInt8]
            do { bytes = try socket.read(timeoutMilliseconds: timeoutMilliseconds) } catch {
                if error.isTimeout {
                    return .failure(.timeout("no answer from the host at \(path) within \(timeoutMilliseconds) ms"))
                }
                return .failure(.connection("cannot read from \(path): \(error)"))
            }
            if bytes.isEmpty { return .failure(.connection("the host at \(path) closed the connection")) }
            reader.append(bytes)
        }
    }

    /// Ends the connection (the host sees end of stream); later calls fail with `connection`.
    public func close() { socket.shutdown() }
}
