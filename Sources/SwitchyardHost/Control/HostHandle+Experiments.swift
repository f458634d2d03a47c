public import SwitchyardProtocol
import Glibc
import SwitchyardUV

// Measurements and fault experiments on a running host: round trips and bursts for the benchmark and the tests,
// signals to plugins and stalls of the loop for fault-isolation experiments (`switchyard chaos`).
extension HostHandle {
    /// Round-trip time of a `$/ping` to `plugin`, in nanoseconds.
    public func ping(_ plugin: String) async throws(ResponseError) -> UInt64 {
        let result: Result<UInt64, ResponseError>? = await onLoop { host, done in
            guard let connection = host.supervisor(named: plugin)?.connection, connection.state == .ready else {
                done(.failure(.pluginUnavailable(plugin, "it is not running")))
                return
            }
            let start = UVLoop.hrtime
            connection.send(PingRequest.self, Empty()) { result in
                done(result.map { _ in UVLoop.hrtime - start })
            }
        }
        guard let result else { throw ResponseError(.shuttingDown, "the host has stopped") }
        return try result.get()
    }

    /// Round-trip times of `count` sequential `$/ping`s to `plugin` (each sent when the previous was answered), in
    /// nanoseconds, measured on the loop thread with `uv_hrtime`. For benchmarks and diagnostics.
    public func pingSeries(_ plugin: String, count: Int) async throws(ResponseError) -> [UInt64] {
        try await requestSeries(plugin, method: PingRequest.method, params: .object(JSONObject()), count: count)
    }

    /// Round-trip times of `count` sequential requests of `method` to `plugin`, in nanoseconds, measured on the loop
    /// thread. The answers are only checked for success: for benchmarks (e.g. `coordinator/route` on an instance).
    public func requestSeries(_ plugin: String, method: String, params: JSONValue, count: Int) async throws(ResponseError) -> [UInt64] {
        let result: Result<[UInt64], ResponseError>? = await onLoop { host, done in
            guard let connection = host.supervisor(named: plugin)?.connection, connection.state == .ready else {
                done(.failure(.pluginUnavailable(plugin, "it is not running")))
                return
            }
            var samples: [UInt64] = []
            samples.reserveCapacity(count)
            func next() {
                let start = UVLoop.hrtime
                connection.sendRaw(method: method, params: params) { result in
                    switch result {
                    case .failure(let error): done(.failure(error))
                    case .success:
                        samples.append(UVLoop.hrtime - start)
                        if samples.count == count { done(.success(samples)) } else { next() }
                    }
                }
            }
            next()
        }
        guard let result else { throw ResponseError(.shuttingDown, "the host has stopped") }
        return try result.get()
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
    public func pingBurst(_ plugin: String, count: Int) async -> BurstResult {
        await requestBurst(plugin, method: PingRequest.method, params: .object(JSONObject()), count: count)
    }

    /// Sends `count` requests of `method` to `plugin` pipelined, at most `window` in flight (a new one leaves as
    /// each answer arrives, so the write queue stays far below the not-reading limit), and returns when all are
    /// settled.
    public func requestBurst(_ plugin: String, method: String, params: JSONValue, count: Int, window: Int = 1_024) async -> BurstResult {
        await onLoop { host, done in
            guard let connection = host.supervisor(named: plugin)?.connection else {
                done(BurstResult(answered: 0, errors: [.pluginUnavailable(plugin, "it is not running")], elapsedNanoseconds: 0))
                return
            }
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
                    connection.sendRaw(method: method, params: params) { result in
                        switch result {
                        case .success: answered += 1
                        case .failure(let error): errors.append(error)
                        }
                        inFlight -= 1
                        remaining -= 1
                        if remaining == 0 {
                            done(BurstResult(answered: answered, errors: errors, elapsedNanoseconds: UVLoop.hrtime - start))
                        } else {
                            pump()
                        }
                    }
                }
            }
            if count == 0 { done(BurstResult(answered: 0, errors: [], elapsedNanoseconds: 0)) }
            pump()
        } ?? BurstResult(answered: 0, errors: [ResponseError(.shuttingDown, "the host has stopped")], elapsedNanoseconds: 0)
    }

    /// Sends a signal to a plugin's process group (fault experiments: SIGKILL, SIGSTOP, SIGCONT).
    public func signal(plugin: String, _ number: Int32) async {
        await onLoop { host, done in
            host.supervisor(named: plugin)?.connection?.signal(number)
            done(())
        }
    }

    /// Blocks the loop thread for `milliseconds`, as a long callback would, for fault experiments on the host's own
    /// stalls. With `plugin`, a `$/ping` to it is sent first, so its answer arrives while the loop is blocked.
    ///
    /// - Returns: whether that ping was answered (nil without `plugin`), once the loop has run again.
    @discardableResult
    public func stallLoop(milliseconds: Int, pinging plugin: String? = nil) async -> Bool? {
        let answered: Result<Bool?, ResponseError>? = await onLoop { host, done in
            guard let plugin, let connection = host.supervisor(named: plugin)?.connection, connection.state == .ready else {
                usleep(UInt32(milliseconds) * 1_000)
                done(.success(nil))
                return
            }
            connection.send(PingRequest.self, Empty()) { result in done(.success((try? result.get()) != nil)) }
            usleep(UInt32(milliseconds) * 1_000)
        }
        return (try? answered?.get()) ?? nil
    }
}
