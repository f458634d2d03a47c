import Dispatch
public import SwitchyardProtocol
import Synchronization
import SwitchyardSystem

/// A client of a running host's control socket for async code: any number of calls in flight at once, each an
/// `async throws` call, and the host's notifications (after `tree/subscribe`) as an `AsyncStream`.
///
/// Threading: one reader thread (a Dispatch queue, never the Swift-concurrency pool, where a blocking read could
/// stall other tasks) reads the socket and feeds an ``RPCEndpoint`` behind a lock; calls write from the caller's
/// task. Deadlines live in the endpoint, on a monotonic clock: the reader sleeps until the earliest one (a wake pipe
/// cuts the sleep short when a call brings an earlier one) and fails what is due.
public final class AsyncControlClient: Sendable {
    /// Why a call did not produce a result (the same cases as the blocking client's).
    public typealias Failure = ControlClient.Failure

    /// State only the lock holder touches.
    private final class Core {
        let endpoint = RPCEndpoint()
        /// Failures that are not the host's answers, by request: a timeout, or the connection's end.
        var failures: [RequestID: Failure] = [:]
        var closing: Failure?
        var notifications: AsyncStream<Message>.Continuation?
    }

    private let socket: UnixSocket
    private let path: String
    /// Pokes the reader out of its wait: a request with an earlier deadline, or ``close()``.
    private let wake: WakePipe
    private let core: Mutex<Core>
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    /// How long each call may wait for its answer; nil waits forever.
    public let timeoutMilliseconds: UInt64?
    private let stream: AsyncStream<Message>
    private let finished = Mutex(false)

    /// Connects to the host listening at `path` (refusing a server that runs as another user) and starts reading.
    public init(path: String, timeoutMilliseconds: UInt64? = 30_000) throws(Failure) {
        self.path = path
        self.timeoutMilliseconds = timeoutMilliseconds
        do { socket = try UnixSocket(connectingTo: path) } catch { throw .unreachable(path, error) }
        do { wake = try WakePipe() } catch {
            socket.close()
            throw .connection("cannot reach the host at \(path): \(error)")
        }
        start = clock.now
        let core = Core()
        let (stream, continuation) = AsyncStream<Message>.makeStream(bufferingPolicy: .unbounded)
        self.stream = stream
        core.notifications = continuation
        let socket = self.socket
        core.endpoint.send = { [unowned core] line in
            do { try socket.write(line) } catch {
                // The reader sees the same break and closes the endpoint; this request must not wait for that.
                core.closing = core.closing ?? .connection("cannot write to \(path): \(error)")
            }
        }
        self.core = Mutex(core)
        let reader = Reader(client: self)
        DispatchQueue(label: "switchyard.control-client").async { reader.run() }
    }

    deinit { socket.close() }

    /// Milliseconds since this client started, on a monotonic clock: the endpoint's time.
    private var now: UInt64 {
        let elapsed = clock.now - start
        return UInt64(elapsed.components.seconds) * 1_000
            + UInt64(elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    /// The notifications the host sends (after `tree/subscribe`), as messages in arrival order; finishes when the
    /// connection ends. One stream per client: iterate it from one task.
    public var notifications: AsyncStream<Message> { stream }

    /// Sends a typed request and decodes its result.
    public func call<R: ControlRequest>(_: R.Type, _ params: R.Params) async throws(Failure) -> R.Result {
        let encoded: JSONValue
        do { encoded = try Coding.encode(params) } catch {
            throw .typed(.unencodable(method: R.method, reason: "\(error)"))
        }
        switch RPCEndpoint.decode(R.self, try await response(R.method, encoded)) {
        case .success(let result): return result
        case .failure(let failure): throw .typed(failure)
        }
    }

    /// Sends a request and returns its raw result.
    public func call(_ method: String, _ params: JSONValue? = nil) async throws(Failure) -> JSONValue {
        switch try await response(method, params) {
        case .success(let result): return result
        case .failure(let error): throw .response(error)
        }
    }

    /// Sends a request and returns the host's answer, result or typed error; throws only when there is no answer.
    public func response(
        _ method: String, _ params: JSONValue? = nil
    ) async throws(Failure) -> Result<JSONValue, ResponseError> {
        let outcome: Result<Result<JSONValue, ResponseError>, Failure> = await withCheckedContinuation { continuation in
            let deadline = timeoutMilliseconds.map { now + $0 }
            core.withLock { core in
                if let failure = core.closing {
                    continuation.resume(returning: .failure(failure))
                    return
                }
                let endpoint = core.endpoint
                var id: RequestID?
                id = endpoint.request(method, params: params, deadline: deadline) { [unowned core] result in
                    if let id, let failure = core.failures.removeValue(forKey: id) {
                        continuation.resume(returning: .failure(failure))
                    } else if case .failure = result, let failure = core.closing {
                        continuation.resume(returning: .failure(failure))
                    } else {
                        continuation.resume(returning: .success(result))
                    }
                }
                // The write failed: the request is withdrawn (its completion will not run) and fails here.
                if let id, let failure = core.closing, endpoint.cancel(id) != nil {
                    continuation.resume(returning: .failure(failure))
                }
            }
            // The reader may be asleep until a later deadline, or forever.
            if deadline != nil { wake.poke() }
        }
        return try outcome.get()
    }

    /// Ends the connection: pending calls fail with `connection`, and the notification stream finishes.
    public func close() {
        socket.shutdown()
        wake.poke()
    }

    // MARK: - Reading

    /// The reader thread's loop; holds the client strongly until the connection ends, so a caller may drop its
    /// reference while calls are in flight.
    private struct Reader: Sendable {
        let client: AsyncControlClient

        func run() {
            var reader = MessageReader(maxLineLength: ControlClient.maxLineLength)
            let ended: Failure
            reading: while true {
                let wait = client.core.withLock { core -> Int32 in
                    guard let deadline = core.endpoint.nextDeadline else { return -1 }
                    let now = client.now
                    return deadline <= now ? 0 : Int32(clamping: deadline - now)
                }
                let ready: (readable: Bool, woken: Bool)
                do { ready = try client.socket.waitReadable(waking: client.wake, timeoutMilliseconds: wait) } catch {
                    ended = .connection("cannot read from \(client.path): \(error)")
                    break
                }
                if ready.woken { client.wake.drain() }
                client.expire()
                guard ready.readable else { continue }
                let bytes: [UInt8]
                do { bytes = try client.socket.read() } catch {
                    ended = .connection("cannot read from \(client.path): \(error)")
                    break
                }
                if bytes.isEmpty {
                    ended = .connection("the host at \(client.path) closed the connection")
                    break
                }
                reader.append(bytes)
                while let event = reader.next() {
                    switch event {
                    case .message(let message, _):
                        client.receive(message)
                    case .violation(let violation):
                        ended = .protocolViolation("the host sent an invalid message: \(violation)")
                        break reading
                    }
                }
            }
            client.end(ended)
        }
    }

    private func expire() {
        let now = self.now
        core.withLock { core in
            let endpoint = core.endpoint
            endpoint.expire(now: now) { [path, timeoutMilliseconds] expired in
                core.failures[expired.id] = .timeout(
                    "no answer from the host at \(path) within \(timeoutMilliseconds ?? 0) ms")
                return RPCEndpoint.timeoutError(expired)
            }
        }
    }

    private func receive(_ message: Message) {
        core.withLock { core in
            switch message {
            case .notification:
                core.notifications?.yield(message)
            case .request:
                break  // the host sends clients no requests; nothing to answer
            case .response, .errorResponse:
                // An error the host could not attribute is a refusal of the whole connection (-32007
                // unauthorized) or an answer to a line it could not read: every call in flight gets it.
                if case .unattributedError(let error) = core.endpoint.receive(message) {
                    core.endpoint.close(error)
                }
            }
        }
    }

    private func end(_ failure: Failure) {
        core.withLock { core in
            core.closing = core.closing ?? failure
            core.endpoint.close(ResponseError(.shuttingDown, failure.description))
            core.notifications?.finish()
            core.notifications = nil
        }
    }
}
