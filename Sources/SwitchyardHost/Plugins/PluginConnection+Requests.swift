import SwitchyardProtocol
import SwitchyardUV

// Requests out: every request to the plugin begins in ``beginRequest(method:timeoutMs:_:_:)``, whatever form its
// params take, and every typed answer is decoded by ``decodeAnswer(_:_:plugin:)``.
extension PluginConnection {
    /// Sends a typed request whose params write their own JSON (``JSONWritable``): no `JSONValue` is built for them.
    /// `reading` reads the answer without Codable where it can (nil: Codable decodes it, and names what is wrong).
    func send<R: HostToPluginRequest>(
        encoding type: R.Type, _ params: R.Params, reading: ((JSONValue) -> R.Result?)? = nil,
        _ completion: @escaping (Result<R.Result, ResponseError>) -> Void
    ) where R.Params: JSONWritable {
        var writer = JSONWriter(capacity: 256)
        params.write(to: &writer)
        let bytes = writer.bytes
        let answer: (Result<JSONValue, ResponseError>) -> Void = { [name] result in
            if let reading, case .success(let value) = result, let read = reading(value) {
                completion(.success(read))
            } else {
                completion(Self.decodeAnswer(R.self, result, plugin: name))
            }
        }
        beginRequest(method: R.method, timeoutMs: nil, answer) { endpoint, deadline, timeout in
            endpoint.request(R.method, encodedParams: bytes, deadline: deadline, timeoutMs: timeout, completion: answer)
        }
    }

    /// Runs `body` with the plugin's stdin corked: the requests it sends (a restore's batch of `coordinator/create`)
    /// leave in gathered writes of up to 64 KiB, not one syscall each.
    func batchingWrites(_ body: () -> Void) {
        let stdin = process?.stdin
        stdin?.cork()
        defer { stdin?.uncork() }
        body()
    }

    /// ``send(encoding:_:reading:_:)`` suspended until the answer, as ``request(_:_:)`` is for Codable params.
    func request<R: HostToPluginRequest>(
        encoding type: R.Type, _ params: R.Params, reading: ((JSONValue) -> R.Result?)? = nil
    ) async -> Result<R.Result, ResponseError> where R.Params: JSONWritable {
        await withCheckedContinuation { continuation in
            send(encoding: type, params, reading: reading) { continuation.resume(returning: $0) }
        }
    }

    /// Sends a typed notification whose params write their own JSON.
    func notify<N: HostToPluginNotification>(encoding type: N.Type, _ params: N.Params) where N.Params: JSONWritable {
        var writer = JSONWriter(capacity: 128)
        params.write(to: &writer)
        _ = writeLine(Message.notificationLine(method: N.method, encodedParams: writer.bytes))
    }

    /// A plugin's answer as `R.Result`; one that does not decode is an `invalidAnswer` naming the plugin.
    static func decodeAnswer<R: HostToPluginRequest>(
        _ type: R.Type, _ result: Result<JSONValue, ResponseError>, plugin name: String
    ) -> Result<R.Result, ResponseError> {
        switch result {
        case .failure(let error): return .failure(error)
        case .success(let value):
            do {
                return .success(try Coding.decode(R.Result.self, from: value))
            } catch {
                let base = ResponseError.invalidParams(method: R.method, error)
                return .failure(ResponseError(
                    .invalidAnswer, "plugin '\(name)' answered '\(R.method)' with an invalid result: \(base.message)",
                    data: base.adding("plugin", .string(name)).data))
            }
        }
    }

    /// Checks that the plugin takes requests now (it is starting or ready, and reads its stdin), then hands the
    /// endpoint a deadline to send with (`request`); what cannot be sent fails `completion` at once.
    func beginRequest(
        method: String, timeoutMs: Int?, _ completion: @escaping (Result<JSONValue, ResponseError>) -> Void,
        _ request: (RPCEndpoint, UInt64, Int) -> RequestID
    ) {
        guard state == .starting || state == .ready || (state == .stopping && method == ShutdownRequest.method) else {
            completion(.failure(.pluginUnavailable(name, "it is \(state)")))
            return
        }
        if let error = refuseWhileNotReading(method: method) {
            completion(.failure(error))
            return
        }
        let timeout = timeoutMs ?? plugin.limits.requestTimeoutMs
        let deadline = loop.activeNow + UInt64(timeout)
        writeFailure = nil
        let id = request(endpoint, deadline, timeout)
        if let error = writeFailure {
            writeFailure = nil
            endpoint.cancel(id, error: error)
            return
        }
        // One timer for the earliest deadline; moved only when a sooner one comes (O(1) per request).
        if deadline < armedDeadline { armDeadlineTimer(deadline) }
    }
}
