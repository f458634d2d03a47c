/// One side of a JSON-RPC 2.0 conversation, without the I/O: request ids, the table of requests awaiting an answer
/// and their deadlines, answers matched to their requests, and incoming requests and notifications routed to
/// handlers registered by method.
///
/// Why sans-I/O: the host (a libuv pipe and one libuv timer), the plugin SDK (stdio and the main actor) and the
/// control client (a blocking socket, or a reader thread) move bytes in three different ways, and each used to keep
/// its own ids, pending table and deadlines. The transport now does only what it must: it writes the lines this
/// endpoint hands to `send`, feeds it every message it reads (``receive(_:)``), and arms one timer for
/// ``nextDeadline`` whose expiry calls ``expire(now:error:)``. Time is the caller's (`now` in ms on whatever clock
/// it chose), so the tests use a fake clock and the host can use `uv_now`, which excludes its own stalls.
///
/// Split as sourcekit-lsp splits `Connection` (message handling) from `JSONRPCConnection` (the transport).
///
/// Not thread-safe: use it from one thread or actor, or behind a lock (the async control client does the latter).
public final class RPCEndpoint {
    /// The outcome of one outgoing request: its raw result, or the error that ended it (the peer's answer, an
    /// expired deadline, a cancellation, the connection's end).
    public typealias Completion = (Result<JSONValue, ResponseError>) -> Void
    /// Reads a request's result from its bytes into the request's own typed value, or says nil to leave it to the
    /// general path (a tree, then ``Completion``). On success it returns what completes the request, which runs once
    /// the request has left the table.
    public typealias ResultReader = (ArraySlice<UInt8>) -> (() -> Void)?
    /// Handles an incoming request; answers through the responder, now or later.
    public typealias RequestHandler = (_ params: JSONValue?, _ responder: Responder) -> Void
    /// Handles an incoming notification.
    public typealias NotificationHandler = (_ params: JSONValue?) -> Void

    /// A request awaiting its answer.
    public struct PendingRequest {
        public let id: RequestID
        public let method: String
        /// Absolute, on the caller's clock (ms); nil waits forever.
        public let deadline: UInt64?
        /// The timeout the deadline came from, for the caller's error messages.
        public let timeoutMs: Int?
        let completion: Completion
        var readResult: ResultReader? = nil
    }

    /// A request whose deadline passed, as ``expire(now:error:)`` reports it (the caller may want to do more than
    /// fail it, e.g. the host kills a plugin that does not answer).
    public struct Expired: Sendable, Equatable {
        public let id: RequestID
        public let method: String
        public let deadline: UInt64
        /// The timeout given with the request, if any.
        public let timeoutMs: Int?
    }

    /// What ``receive(_:)`` did with a message.
    public enum Received: Equatable {
        /// An answer that completed the pending request `id` (of `method`).
        case resolved(id: RequestID, method: String)
        /// An answer to no pending request (late, cancelled, or never sent): dropped.
        case unmatched(id: RequestID)
        /// An error with a null id: the peer could not read a request's id (a parse error), or refuses the whole
        /// connection. No request is completed; the caller decides (a one-at-a-time client fails its request).
        case unattributedError(ResponseError)
        /// An incoming request given to its handler, or answered `methodNotFound` when there is none.
        case request(id: RequestID, method: String, handled: Bool)
        /// An incoming notification given to its handler, or dropped (`handled` false) when there is none.
        case notification(method: String, handled: Bool)
    }

    /// Answers one incoming request, exactly once; later answers are ignored.
    public final class Responder {
        /// The request's id.
        public let id: RequestID
        /// The request's method.
        public let method: String
        /// Strong, not weak: a weak reference costs a side table and atomic loads on every request, and nothing
        /// keeps a responder past its answer but a handler still working on it (no cycle: the endpoint keeps none).
        private let endpoint: RPCEndpoint
        /// Whether an answer left (an unanswered request is a bug in its handler, visible in tests).
        public private(set) var answered = false

        init(id: RequestID, method: String, endpoint: RPCEndpoint) {
            self.id = id
            self.method = method
            self.endpoint = endpoint
        }

        /// Answers with a result or a typed error.
        public func reply(_ result: Result<JSONValue, ResponseError>) {
            switch result {
            case .success(let value): answer(Message.response(id: id, result: value).encodedLine())
            case .failure(let error): answer(Message.errorResponse(id: id, error: error).encodedLine())
            }
        }

        /// Answers with a result already encoded as JSON bytes (a large snapshot encoded once, straight to bytes).
        public func replyEncoded(_ result: [UInt8]) {
            answer(Message.responseLine(id: id, encodedResult: result))
        }

        /// Answers with a typed result, encoded here; an encoding failure answers `internalError`.
        public func reply<T: Encodable>(encoding result: Result<T, ResponseError>) {
            reply(
                result.flatMap { value in
                    Result { try Coding.encode(value) }.mapError { error in
                        ResponseError(.internalError, "cannot encode the result of \(method): \(error)")
                    }
                })
        }

        private func answer(_ line: [UInt8]) {
            guard !answered else { return }
            answered = true
            endpoint.emit(line)
        }
    }

    /// Where every outgoing line (newline included) goes: requests, notifications and answers. Settable after init
    /// so an owner can route lines to itself without a reference cycle at construction.
    public var send: ([UInt8]) -> Void
    private var nextID: Int64
    private var pending = PendingTable()
    private var requestHandlers: [String: RequestHandler] = [:]
    private var notificationHandlers: [String: NotificationHandler] = [:]
    /// Why the endpoint closed; new requests fail with it at once.
    public private(set) var closedError: ResponseError?

    /// - Parameters:
    ///   - firstID: the id of the first request (ids count up from it, per connection).
    ///   - send: where outgoing lines go.
    public init(firstID: Int64 = 1, send: @escaping ([UInt8]) -> Void = { _ in }) {
        nextID = firstID
        self.send = send
    }

    fileprivate func emit(_ line: [UInt8]) { send(line) }

    // MARK: - Outgoing

    /// Sends a request; `completion` runs exactly once: with the answer, or when the request expires, is cancelled
    /// or the endpoint closes. On a closed endpoint it runs at once with the closing error.
    ///
    /// - Parameters:
    ///   - deadline: absolute, on the caller's clock (ms); nil waits forever.
    ///   - timeoutMs: the timeout `deadline` came from, carried to ``Expired`` for the caller's messages.
    /// - Returns: the request's id (to cancel it, or to match logs).
    @discardableResult
    public func request(
        _ method: String, params: JSONValue?, deadline: UInt64? = nil, timeoutMs: Int? = nil,
        completion: @escaping Completion
    ) -> RequestID {
        register(method, deadline: deadline, timeoutMs: timeoutMs, completion: completion) { id in
            Message.request(id: id, method: method, params: params).encodedLine()
        }
    }

    /// ``request(_:params:deadline:timeoutMs:completion:)`` with params already encoded as JSON (written straight
    /// to bytes, not through a `JSONValue`).
    @discardableResult
    ///
    /// With `readResult`, an answer ``receive(answer:result:)`` is given is read by it, not through a tree; it says
    /// nil to anything outside its shape, which then reaches `completion` as any answer does.
    public func request(
        _ method: String, encodedParams: [UInt8], deadline: UInt64? = nil, timeoutMs: Int? = nil,
        readResult: ResultReader? = nil, completion: @escaping Completion
    ) -> RequestID {
        register(method, deadline: deadline, timeoutMs: timeoutMs, readResult: readResult, completion: completion) {
            id in Message.requestLine(id: id, method: method, encodedParams: encodedParams)
        }
    }

    private func register(
        _ method: String, deadline: UInt64?, timeoutMs: Int?, readResult: ResultReader? = nil,
        completion: @escaping Completion, line: (RequestID) -> [UInt8]
    ) -> RequestID {
        let id = RequestID.number(nextID)
        nextID += 1
        if let closedError {
            completion(.failure(closedError))
            return id
        }
        // Registered before the line leaves: a transport that answers synchronously (tests, in-process pairs) must
        // find the request pending.
        pending.insert(
            PendingRequest(
                id: id, method: method, deadline: deadline, timeoutMs: timeoutMs, completion: completion,
                readResult: readResult))
        send(line(id))
        return id
    }

    /// Sends a typed request and decodes its result into `R.Result`.
    ///
    /// Params that cannot be encoded fail at once with ``RPCFailure/unencodable(method:reason:)`` and nothing is
    /// sent; a result that does not decode fails with ``RPCFailure/undecodable(method:reason:)``, so each caller
    /// words those in its own terms.
    @discardableResult
    public func request<R: RequestMethod>(
        _ type: R.Type, _ params: R.Params, deadline: UInt64? = nil,
        completion: @escaping (Result<R.Result, RPCFailure>) -> Void
    ) -> RequestID? {
        let encoded: JSONValue
        do { encoded = try Coding.encode(params) } catch {
            completion(.failure(.unencodable(method: R.method, reason: "\(error)")))
            return nil
        }
        return request(R.method, params: encoded, deadline: deadline) { result in
            completion(Self.decode(R.self, result))
        }
    }

    /// Decodes a raw outcome into `R.Result` (for callers that await the raw result and decode afterwards).
    public static func decode<R: RequestMethod>(
        _ type: R.Type, _ result: Result<JSONValue, ResponseError>
    )
        -> Result<R.Result, RPCFailure>
    {
        switch result {
        case .failure(let error): return .failure(.response(error))
        case .success(let value):
            do { return .success(try Coding.decode(R.Result.self, from: value)) } catch {
                return .failure(.undecodable(method: R.method, reason: "\(error)"))
            }
        }
    }

    /// Sends a notification (nothing to wait for). Dropped on a closed endpoint.
    public func notify(_ method: String, params: JSONValue?) {
        guard closedError == nil else { return }
        send(Message.notification(method: method, params: params).encodedLine())
    }

    /// Sends a typed notification; returns false (and sends nothing) if its params cannot be encoded.
    @discardableResult
    public func notify<N: NotificationMethod>(_ type: N.Type, _ params: N.Params) -> Bool {
        guard let encoded = try? Coding.encode(params) else { return false }
        notify(N.method, params: encoded)
        return true
    }

    /// Stops waiting for request `id`: it leaves the table and, with `error`, its completion runs with it (without,
    /// the completion never runs: the caller has already given up). A late answer is then ``Received/unmatched(id:)``.
    ///
    /// - Returns: the request, if it was still pending.
    @discardableResult
    public func cancel(_ id: RequestID, error: ResponseError? = nil) -> PendingRequest? {
        guard let request = pending.remove(id) else { return nil }
        if let error { request.completion(.failure(error)) }
        return request
    }

    /// How many requests await an answer.
    public var pendingCount: Int { pending.count }

    /// The methods of the requests awaiting an answer, with how many of each: what a wait for none is stuck on.
    public var pendingMethods: [String: Int] {
        pending.all.reduce(into: [:]) { counts, request in counts[request.method, default: 0] += 1 }
    }

    /// Whether request `id` awaits its answer (cheaper than ``pendingRequest(_:)``: nothing is copied).
    public func isPending(_ id: RequestID) -> Bool { pending.contains(id) }

    /// The pending request `id`, if any.
    public func pendingRequest(_ id: RequestID) -> PendingRequest? { pending[id] }

    /// The earliest deadline of a pending request: arm one timer for it, and call ``expire(now:error:)`` when it
    /// fires. Nil when nothing waits with a deadline.
    public var nextDeadline: UInt64? {
        pending.all.lazy.compactMap(\.deadline).min()
    }

    /// Fails every pending request whose deadline is at or before `now`, earliest first, each with the error
    /// `error` makes for it (by default a `timeout` naming the method).
    ///
    /// - Returns: the expired requests, so the caller can act on them (log, kill a hung peer).
    @discardableResult
    public func expire(now: UInt64, error: (Expired) -> ResponseError = RPCEndpoint.timeoutError) -> [Expired] {
        let due = pending.all
            .compactMap { request in
                request.deadline.flatMap {
                    $0 <= now
                        ? Expired(id: request.id, method: request.method, deadline: $0, timeoutMs: request.timeoutMs)
                        : nil
                }
            }
            .sorted { ($0.deadline, $0.id.description) < ($1.deadline, $1.id.description) }
        for expired in due {
            // A completion may cancel or expire other requests: take each out before calling anything.
            guard let request = pending.remove(expired.id) else { continue }
            request.completion(.failure(error(expired)))
        }
        return due
    }

    /// The default error of an expired request.
    public static func timeoutError(_ expired: Expired) -> ResponseError {
        ResponseError(.timeout, "no answer to '\(expired.method)' in time", data: ["method": .string(expired.method)])
    }

    /// Fails every pending request with `error` and refuses new ones: the connection is gone. Idempotent (the
    /// first error stays).
    public func close(_ error: ResponseError) {
        if closedError == nil { closedError = error }
        let failed = pending.all.sorted { $0.id.description < $1.id.description }
        pending.removeAll()
        for request in failed { request.completion(.failure(error)) }
    }

    // MARK: - Incoming

    /// Handles incoming requests of `method` (replacing an earlier handler).
    public func onRequest(_ method: String, _ handler: @escaping RequestHandler) {
        requestHandlers[method] = handler
    }

    /// Handles incoming typed requests; params that do not decode are answered `invalidParams` naming the field.
    public func onRequest<R: RequestMethod>(
        _ type: R.Type, _ handler: @escaping (R.Params, Responder) -> Void
    ) {
        requestHandlers[R.method] = { raw, responder in
            let params: R.Params
            do { params = try Coding.decode(R.Params.self, from: raw) } catch {
                responder.reply(.failure(.invalidParams(method: R.method, error)))
                return
            }
            handler(params, responder)
        }
    }

    /// Handles incoming notifications of `method` (replacing an earlier handler).
    public func onNotification(_ method: String, _ handler: @escaping NotificationHandler) {
        notificationHandlers[method] = handler
    }

    /// Handles incoming typed notifications; params that do not decode are dropped (a notification has no one to
    /// answer).
    public func onNotification<N: NotificationMethod>(_ type: N.Type, _ handler: @escaping (N.Params) -> Void) {
        notificationHandlers[N.method] = { raw in
            guard let params = try? Coding.decode(N.Params.self, from: raw) else { return }
            handler(params)
        }
    }

    /// Whether a handler is registered for incoming requests of `method`.
    public func handlesRequest(_ method: String) -> Bool { requestHandlers[method] != nil }

    /// An answer's result, unparsed (``MessageReader/nextKeepingAnswers()``), given to the reader of the request it
    /// answers. True when that reader took it: the request is complete. False when there is no such request, it has
    /// no reader, or the bytes are outside the reader's shape: nothing happened, and the caller decodes the line and
    /// passes it to ``receive(_:)`` as usual (so errors and unmatched answers are handled in one place).
    public func receive(answer id: Int64, result: ArraySlice<UInt8>) -> Bool {
        let key = RequestID.number(id)
        guard let read = pending.resultReader(key), let complete = read(result) else { return false }
        _ = pending.remove(key)
        complete()
        return true
    }

    /// Takes one message read from the peer: completes the request an answer belongs to, or routes a request or
    /// notification to its handler. A request without a handler is answered `methodNotFound`.
    @discardableResult
    public func receive(_ message: Message) -> Received {
        switch message {
        case .response(let id, let result):
            guard let request = pending.remove(id) else { return .unmatched(id: id) }
            request.completion(.success(result))
            return .resolved(id: id, method: request.method)
        case .errorResponse(let id?, let error):
            guard let request = pending.remove(id) else { return .unmatched(id: id) }
            request.completion(.failure(error))
            return .resolved(id: id, method: request.method)
        case .errorResponse(nil, let error):
            return .unattributedError(error)
        case .request(let id, let method, let params):
            let responder = Responder(id: id, method: method, endpoint: self)
            guard let handler = requestHandlers[method] else {
                responder.reply(.failure(.methodNotFound(method)))
                return .request(id: id, method: method, handled: false)
            }
            handler(params, responder)
            return .request(id: id, method: method, handled: true)
        case .notification(let method, let params):
            guard let handler = notificationHandlers[method] else {
                return .notification(method: method, handled: false)
            }
            handler(params)
            return .notification(method: method, handled: true)
        }
    }
}

/// Why a typed request produced no result: the peer's error, or a value that would not encode or decode (kept apart
/// so each caller can word them: the CLI calls an undecodable answer a protocol violation, the SDK `invalidAnswer`).
public enum RPCFailure: Error, Sendable, Equatable {
    /// The peer answered with an error (or the request expired, was cancelled, or the connection closed).
    case response(ResponseError)
    /// The params could not be encoded; nothing was sent.
    case unencodable(method: String, reason: String)
    /// The result does not decode as the method's `Result`.
    case undecodable(method: String, reason: String)
}
