public import SwitchyardProtocol
import SwitchyardUV

/// A blocking client of a running host's control socket (Protocol/README.md §15): what `switchyard open`, `tree`
/// and `watch` use, and what a test or a tool can use to drive an app from outside.
///
/// One request at a time; notifications that arrive while waiting for a response are kept for
/// ``nextNotification(timeoutMilliseconds:)``.
public final class ControlClient {
    /// Why a call did not produce a result.
    public enum Failure: Error, CustomStringConvertible {
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
    }

    private let socket: UnixSocket
    private let path: String
    private var reader = MessageReader(maxLineLength: 64 << 20)
    private var nextID: Int64 = 1
    private var pending: [(method: String, params: JSONValue?)] = []
    /// How long one read may block; `-1` waits forever (`watch`).
    public var timeoutMilliseconds: Int32

    public init(path: String, timeoutMilliseconds: Int32 = 30_000) throws(Failure) {
        self.path = path
        self.timeoutMilliseconds = timeoutMilliseconds
        do { socket = try UnixSocket(connectingTo: path) } catch {
            let hint = error.isNotFound || error.isConnectionRefused
                ? " (is `switchyard run` running? --socket or --app choose another host)" : ""
            throw .connection("cannot reach the host at \(path): \(error)\(hint)")
        }
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
        do { encoded = try JSONValueEncoder().encode(params) } catch {
            throw .protocolViolation("cannot encode the params of \(R.method): \(error)")
        }
        let result = try call(R.method, encoded)
        do { return try JSONValueDecoder().decode(R.Result.self, from: result) } catch {
            throw .protocolViolation("the host's answer to \(R.method) does not decode: \(error)")
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
    public func response(_ method: String, _ params: JSONValue? = nil) throws(Failure) -> Result<JSONValue, ResponseError> {
        let id = nextID
        nextID += 1
        let line = Message.request(id: .number(id), method: method, params: params).encodedLine()
        do { try sendRaw(line) } catch {
            // The host may have refused the connection before reading anything (-32007 unauthorized): its error
            // is waiting in the socket and says more than the broken pipe.
            if case .errorResponse(nil, let refusal)? = try? next() { return .failure(refusal) }
            throw error
        }
        while true {
            let message = try next()
            switch message {
            case .response(let answered, let result):
                if answered == .number(id) { return .success(result) }
            case .errorResponse(let answered, let error):
                if answered == nil || answered == .number(id) { return .failure(error) }
            case .notification(let method, let params):
                pending.append((method, params))
            case .request:
                continue
            }
        }
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

    /// The next message of any kind.
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
                case .violation(let violation): return .failure(.protocolViolation("the host sent an invalid message: \(violation)"))
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

    public func close() { socket.close() }
}
