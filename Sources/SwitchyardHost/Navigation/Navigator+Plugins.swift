import Logging
import SwitchyardNavigation
import SwitchyardProtocol

// What the navigator does for and with plugins outside a chain: restoring a restarted plugin's instances, sending
// a committed chain's notifications, and serving the navigation requests plugins send.
extension Navigator {
    // MARK: - Restore

    /// Re-creates every instance `plugin` owns in the tree, in a restarted process: `coordinator/create` with
    /// reason `restore`, the state the host kept and the instance as the tree holds it, parents before children
    /// (pipelined: one round trip for all of them). The tree does not change. Failures are logged and returned;
    /// the instances stay (the tree is authoritative), and the next route on one tells the plugin's answer.
    /// Placeholders are not restored: the plugin never created them (``createPlaceholders(of:_:)`` does).
    func restore(plugin: String, via connection: PluginConnection, _ completion: @escaping ([ResponseError]) -> Void) {
        let requests = tree.restoreRequests(for: plugin)
        guard !requests.isEmpty else {
            completion([])
            return
        }
        var remaining = requests.count
        var failures: [ResponseError] = []
        connection.batchingWrites {
            for params in requests {
                connection.send(encoding: CoordinatorCreateRequest.self, params, reading: CoordinatorCreateRequest.Result.init(reading:)) { [weak self] result in
                    if case .failure(let error) = result {
                        self?.logger.warning("restore of \(params.type)\(params.instance) in '\(plugin)' failed: \(error.message)")
                        failures.append(error)
                    }
                    remaining -= 1
                    if remaining == 0 { completion(failures) }
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
                plugins?.connection(plugin)?.notify(
                    encoding: CoordinatorDismissedNotification.self, .init(instance: instance, entry: entry, route: route, reason: reason))
            case .tabSelected(let instance, let plugin, let tab, let isRepeat):
                plugins?.connection(plugin)?.notify(
                    encoding: CoordinatorTabSelectedNotification.self, .init(instance: instance, tab: tab, isRepeat: isRepeat))
            case .appeared(let instance, let plugin, let entry):
                plugins?.connection(plugin)?.notify(encoding: CoordinatorAppearedNotification.self, .init(instance: instance, entry: entry))
            }
        }
    }

    /// Sends `coordinator/destroy` for each instance (in the order given: deepest first) and publishes each
    /// acknowledgement.
    func destroy(_ instances: [(InstanceID, String, String)]) {
        for (instance, plugin, type) in instances {
            guard let connection = plugins?.connection(plugin) else { continue }
            connection.send(encoding: CoordinatorDestroyRequest.self, .init(instance: instance, type: type)) { [weak self] result in
                switch result {
                case .success: self?.publish(.destroyed(plugin: plugin, instance: instance, type: type))
                case .failure(let error): self?.logger.debug("destroy of \(instance) in '\(plugin)' failed: \(error.message)")
                }
            }
        }
    }

    // MARK: - Plugin requests

    /// Handles `navigate` and `tree/query` from a plugin.
    func handle(request method: String, params: JSONValue?, from plugin: String, _ reply: @escaping (Result<JSONValue, ResponseError>) -> Void) {
        switch method {
        case NavigateRequest.method:
            guard let request = decode(NavigateRequest.Params.self, params, method, reply) else { return }
            afterChainsConsulting(plugin) { [weak self] in
                self?.navigate(from: request.instance, steps: request.steps, requester: .plugin(plugin)) { result in
                    reply(result.flatMap { value in Result { try Coding.encode(value) }.mapError { ResponseError.wrapping($0) } })
                }
            }
        case TreeQueryRequest.method:
            guard var request = decode(TreeQueryRequest.Params.self, params, method, reply) else { return }
            if request.query == .newest, request.plugin == nil { request.plugin = plugin }
            afterChainsConsulting(plugin) { [weak self] in
                guard let self else { return }
                reply(Result { () throws(ResponseError) in JSONValue.object(["result": try self.tree.answer(request)]) })
            }
        default:
            reply(.failure(.methodNotFound(method)))
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ params: JSONValue?, _ method: String, _ reply: (Result<JSONValue, ResponseError>) -> Void) -> T? {
        do {
            return try Coding.decode(type, from: params)
        } catch {
            reply(.failure(.invalidParams(method: method, error)))
            return nil
        }
    }
}
