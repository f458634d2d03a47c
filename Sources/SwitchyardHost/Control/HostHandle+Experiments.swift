public import SwitchyardProtocol
import Glibc
import SwitchyardUV

// Measurements and fault experiments on a running host: round trips and bursts for the benchmark and the tests,
// signals to plugins and stalls of the loop for fault-isolation experiments (`switchyard chaos`).
extension HostHandle {
    /// Round-trip time of a `$/ping` to `plugin`, in nanoseconds.
    @concurrent public func ping(_ plugin: String) async throws(ResponseError) -> UInt64 {
        guard !isStopped else { throw ResponseError(.shuttingDown, "the host has stopped") }
        return try await host.ping(plugin)
    }

    /// Round-trip times of `count` sequential `$/ping`s to `plugin` (each sent when the previous was answered), in
    /// nanoseconds, measured on the loop thread with `uv_hrtime`. For benchmarks and diagnostics.
    @concurrent public func pingSeries(_ plugin: String, count: Int) async throws(ResponseError) -> [UInt64] {
        try await requestSeries(plugin, method: PingRequest.method, params: .object(JSONObject()), count: count)
    }

    /// Round-trip times of `count` sequential `coordinator/route` requests to `plugin`, in nanoseconds, sent and read
    /// as the navigator sends and reads them (the request's byte writer, the answer's typed reader), so a benchmark
    /// measures a route hop as a chain pays it.
    @concurrent public func routeSeries(
        _ plugin: String, _ request: CoordinatorRouteRequest.Params, count: Int
    ) async throws(ResponseError) -> [UInt64] {
        guard !isStopped else { throw ResponseError(.shuttingDown, "the host has stopped") }
        return try await host.routeSeries(plugin, request, count: count)
    }

    /// Round-trip times of `count` sequential requests of `method` to `plugin`, in nanoseconds, measured on the loop
    /// thread. The answers are only checked for success: for benchmarks (e.g. `coordinator/route` on an instance).
    @concurrent public func requestSeries(
        _ plugin: String, method: String, params: JSONValue, count: Int
    ) async throws(ResponseError) -> [UInt64] {
        guard !isStopped else { throw ResponseError(.shuttingDown, "the host has stopped") }
        return try await host.requestSeries(plugin, method: method, params: params, count: count)
    }

    /// The outcome of a pipelined burst of requests.
    public struct BurstResult: Sendable {
        public let answered: Int
        public let errors: [ResponseError]
        /// From the first send to the last answer, in nanoseconds.
        public let elapsedNanoseconds: UInt64
    }

    /// Sends `count` pings to `plugin` back to back without waiting for answers (pipelined), and returns when every
    /// one has been answered or has failed. Used by the throughput benchmark and to push a plugin that stops
    /// reading past the write-queue bound.
    @concurrent public func pingBurst(_ plugin: String, count: Int) async -> BurstResult {
        await requestBurst(plugin, method: PingRequest.method, params: .object(JSONObject()), count: count)
    }

    /// Sends `count` requests of `method` to `plugin` pipelined, at most `window` in flight (a new one leaves as
    /// each answer arrives, so the write queue stays far below the not-reading limit), and returns when all are
    /// settled.
    @concurrent public func requestBurst(
        _ plugin: String, method: String, params: JSONValue, count: Int, window: Int = 1_024
    ) async -> BurstResult {
        guard !isStopped else {
            return BurstResult(
                answered: 0, errors: [ResponseError(.shuttingDown, "the host has stopped")], elapsedNanoseconds: 0)
        }
        return await host.requestBurst(plugin, method: method, params: params, count: count, window: window)
    }

    /// Sends a signal to a plugin's process group (fault experiments: SIGKILL, SIGSTOP, SIGCONT).
    @concurrent public func signal(plugin: String, _ number: Int32) async {
        guard !isStopped else { return }
        await host.signal(plugin: plugin, number)
    }

    /// Blocks the loop thread for `milliseconds`, as a long callback would, for fault experiments on the host's own
    /// stalls. With `plugin`, a `$/ping` to it is sent first, so its answer arrives while the loop is blocked.
    ///
    /// - Returns: whether that ping was answered (nil without `plugin`), once the loop has run again.
    @discardableResult
    @concurrent public func stallLoop(milliseconds: Int, pinging plugin: String? = nil) async -> Bool? {
        guard !isStopped else { return nil }
        return await host.stallLoop(milliseconds: milliseconds, pinging: plugin)
    }
}

// The experiments' work, on the loop. Requests go out through the plugin's session as every other request does;
// the callbacks here are the session's completions, counted on the loop without a task per answer.
extension Host {
    private func readySession(_ plugin: String) throws(ResponseError) -> PluginSession {
        guard let session = plugins[plugin]?.session, session.state == .ready else {
            throw .pluginUnavailable(plugin, "it is not running")
        }
        return session
    }

    func ping(_ plugin: String) async throws(ResponseError) -> UInt64 {
        let session = try readySession(plugin)
        let start = UVLoop.hrtime
        _ = try await session.request(PingRequest.self, Empty()).get()
        return UVLoop.hrtime - start
    }

    func requestSeries(
        _ plugin: String, method: String, params: JSONValue, count: Int
    ) async throws(ResponseError) -> [UInt64] {
        let session = try readySession(plugin)
        return try await series(count: count) { answered in
            session.sendRaw(method: method, params: params) { answered($0.map { _ in () }) }
        }
    }

    func routeSeries(
        _ plugin: String, _ request: CoordinatorRouteRequest.Params, count: Int
    ) async throws(ResponseError) -> [UInt64] {
        let session = try readySession(plugin)
        return try await series(count: count) { answered in
            session.send(
                encoding: CoordinatorRouteRequest.self, request, reading: CoordinatorRouteRequest.Result.init(reading:),
                readingBytes: CoordinatorRouteRequest.Result.init(resultBytes:maxDepth:)
            ) { answered($0.map { _ in () }) }
        }
    }

    /// `count` round trips one after another, each `send` started when the last one's answer came, timed in
    /// nanoseconds. Chained in the session's completions, on the loop, as the benchmark's instruction counts have
    /// always been taken: a round trip's own cost (write, read, match), not a task's resumption per answer, which a
    /// chain's hop pays on top (the deep-link rows count it).
    private func series(
        count: Int, _ send: @escaping (_ answered: @escaping (Result<Void, ResponseError>) -> Void) -> Void
    ) async throws(ResponseError) -> [UInt64] {
        guard count > 0 else { return [] }
        let series: Result<[UInt64], ResponseError> = await withCheckedContinuation { continuation in
            var samples: [UInt64] = []
            samples.reserveCapacity(count)
            func next() {
                let start = UVLoop.hrtime
                send { result in
                    switch result {
                    case .failure(let error): continuation.resume(returning: .failure(error))
                    case .success:
                        samples.append(UVLoop.hrtime - start)
                        if samples.count == count { continuation.resume(returning: .success(samples)) } else { next() }
                    }
                }
            }
            next()
        }
        return try series.get()
    }

    func requestBurst(
        _ plugin: String, method: String, params: JSONValue, count: Int, window: Int
    ) async -> HostHandle.BurstResult {
        guard let session = plugins[plugin]?.session else {
            return HostHandle.BurstResult(
                answered: 0, errors: [.pluginUnavailable(plugin, "it is not running")], elapsedNanoseconds: 0)
        }
        guard count > 0 else { return HostHandle.BurstResult(answered: 0, errors: [], elapsedNanoseconds: 0) }
        return await withCheckedContinuation { continuation in
            let start = UVLoop.hrtime
            var unsent = count
            var inFlight = 0
            var remaining = count
            var answered = 0
            var errors: [ResponseError] = []
            var pumping = false
            // A loop, not recursion: a request to a plugin that has gone fails synchronously, and `count` nested
            // completions would overflow the stack.
            func pump() {
                guard !pumping else { return }
                pumping = true
                defer { pumping = false }
                while unsent > 0 && inFlight < max(1, window) {
                    unsent -= 1
                    inFlight += 1
                    session.sendRaw(method: method, params: params) { result in
                        switch result {
                        case .success: answered += 1
                        case .failure(let error): errors.append(error)
                        }
                        inFlight -= 1
                        remaining -= 1
                        if remaining == 0 {
                            continuation.resume(
                                returning: HostHandle.BurstResult(
                                    answered: answered, errors: errors, elapsedNanoseconds: UVLoop.hrtime - start))
                        } else {
                            pump()
                        }
                    }
                }
            }
            pump()
        }
    }

    func signal(plugin: String, _ number: Int32) {
        plugins[plugin]?.session?.signal(number)
    }

    func stallLoop(milliseconds: Int, pinging plugin: String?) async -> Bool? {
        guard let plugin, let session = try? readySession(plugin) else {
            usleep(UInt32(milliseconds) * 1_000)
            return nil
        }
        return await withCheckedContinuation { continuation in
            session.send(PingRequest.self, Empty()) { result in
                continuation.resume(returning: (try? result.get()) != nil)
            }
            usleep(UInt32(milliseconds) * 1_000)
        }
    }
}

extension PluginSignalRequest.Signal {
    /// The signal's number, as `plugin/signal` sends it to the plugin's process group.
    public var number: Int32 {
        switch self {
        case .kill: SIGKILL
        case .stop: SIGSTOP
        case .cont: SIGCONT
        case .usr1: SIGUSR1
        }
    }
}
