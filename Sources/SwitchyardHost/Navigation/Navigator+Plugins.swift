import Logging
import SwitchyardNavigation
import SwitchyardProtocol

// What the navigator does for and with plugins outside a chain: restoring a restarted plugin's instances, sending
// a committed chain's notifications, and serving the navigation requests plugins send.
extension Navigator {
    // MARK: - Restore

    /// Re-creates every instance each plugin owns in the tree, in its (restarted) process: `coordinator/create` with
    /// reason `restore`, the state the host kept and the instance as the tree holds it, parents before children
    /// (pipelined: one round trip per plugin for all of them, every plugin at once). The tree does not change.
    /// Failures are logged and returned per plugin; the instances stay (the tree is authoritative), and the next
    /// route on one tells the plugin's answer. Placeholders are not restored: the plugin never created them
    /// (``createPlaceholders(of:)`` does).
    func restore(_ targets: [(plugin: String, session: PluginSession)]) async -> [String: [ResponseError]] {
        let batches = targets.map {
            (plugin: $0.plugin, session: $0.session, requests: tree.restoreRequests(for: $0.plugin))
        }
        let total = batches.reduce(0) { $0 + $1.requests.count }
        guard total > 0 else { return [:] }
        return await withCheckedContinuation { continuation in
            var remaining = total
            var failures: [String: [ResponseError]] = [:]
            for batch in batches where !batch.requests.isEmpty {
                batch.session.batchingWrites {
                    for params in batch.requests {
                        batch.session.send(
                            encoding: CoordinatorCreateRequest.self, params,
                            reading: CoordinatorCreateRequest.Result.init(reading:)
                        ) {
                            [logger] result in
                            if case .failure(let error) = result {
                                logger.warning(
                                    "restore of \(params.type)\(params.instance) in '\(batch.plugin)' failed: \(error.message)"
                                )
                                failures[batch.plugin, default: []].append(error)
                            }
                            remaining -= 1
                            if remaining == 0 { continuation.resume(returning: failures) }
                        }
                    }
                }
            }
        }
    }

    // MARK: - Effects

    func send(_ effects: [ChainEffect]) {
        for effect in effects {
            switch effect {
            case .destroy(let instance, let plugin, let type):
                destroy([(instance, plugin, type)])
            case .dismissed(let instance, let plugin, let entry, let route, let reason):
                plugins?.session(plugin)?.notify(
                    encoding: CoordinatorDismissedNotification.self,
                    .init(instance: instance, entry: entry, route: route, reason: reason))
            case .tabSelected(let instance, let plugin, let tab, let isRepeat):
                plugins?.session(plugin)?.notify(
                    encoding: CoordinatorTabSelectedNotification.self,
                    .init(instance: instance, tab: tab, isRepeat: isRepeat))
            case .appeared(let instance, let plugin, let entry):
                plugins?.session(plugin)?.notify(
                    encoding: CoordinatorAppearedNotification.self, .init(instance: instance, entry: entry))
            }
        }
    }

    /// Sends `coordinator/destroy` for each instance (in the order given: deepest first) and publishes each
    /// acknowledgement.
    func destroy(_ instances: [(InstanceID, String, String)]) {
        for (instance, plugin, type) in instances {
            guard let session = plugins?.session(plugin) else { continue }
            session.send(encoding: CoordinatorDestroyRequest.self, .init(instance: instance, type: type)) {
                [weak self] result in
                switch result {
                case .success: self?.publish(.destroyed(plugin: plugin, instance: instance, type: type))
                case .failure(let error):
                    self?.logger.debug("destroy of \(instance) in '\(plugin)' failed: \(error.message)")
                }
            }
        }
    }

    // MARK: - Plugin requests

    /// Serves `navigate` and `tree/query` from a plugin, once every chain that consulted it has finished; returns the
    /// result's JSON bytes.
    func serve(request method: String, params: JSONValue?, from plugin: String) async throws(ResponseError) -> [UInt8] {
        switch method {
        case NavigateRequest.method:
            let request = try Self.decode(NavigateRequest.self, params)
            await afterChainsConsulting(plugin)
            let result = try await navigate(from: request.instance, steps: request.steps, requester: .plugin(plugin))
            do { return try JSONValueEncoder().encodeBytes(result) } catch { throw .wrapping(error) }
        case TreeQueryRequest.method:
            var request = try Self.decode(TreeQueryRequest.self, params)
            if request.query == .newest, request.plugin == nil { request.plugin = plugin }
            await afterChainsConsulting(plugin)
            let result = TreeQueryRequest.Result(result: try tree.answer(request))
            do { return try JSONValueEncoder().encodeBytes(result) } catch { throw .wrapping(error) }
        default:
            throw .methodNotFound(method)
        }
    }

    /// A request's params, or `invalidParams` naming the method and the field.
    private static func decode<R: RequestMethod>(_ type: R.Type, _ params: JSONValue?) throws(ResponseError) -> R.Params
    {
        do { return try Coding.decode(R.Params.self, from: params) } catch {
            throw .invalidParams(method: R.method, error)
        }
    }
}
