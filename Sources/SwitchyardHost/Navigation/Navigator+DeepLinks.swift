import SwitchyardNavigation
import SwitchyardProtocol

// Deep links (Protocol/README.md §13): resolved against the composed route tables (asking the plugins whose types
// resolve links themselves), then applied as one chain in the same flow.
extension Navigator {
    /// Validates a deep link (dry run) and, if `apply`, applies it as one chain.
    func open(_ url: String, apply: Bool, _ completion: @escaping (Result<(plan: DeepLinkPlan, result: NavigateRequest.Result?), ResponseError>) -> Void) {
        let link: DeepLinkURL
        do { link = try DeepLinkURL(parsing: url, limits: requestLimits) } catch {
            completion(.failure(error))
            return
        }
        let resolver = DeepLinkResolver(link: link, tree: tree, registry: registry)
        startFlow {
            let plan: DeepLinkPlan
            do throws(ResponseError) { plan = try await self.resolve(resolver) } catch {
                completion(.failure(error))
                return
            }
            guard apply else {
                completion(.success((plan, nil)))
                return
            }
            // The chain runs on in this flow: a link pays for one task, not two.
            await self.navigating(from: plan.start, steps: plan.steps, requester: .control, links: plan.links) { result in
                completion(result.map { (plan, $0) })
            }
        } stopped: {
            completion(.failure(ResponseError(.internalError, "the host is stopping")))
        }
    }

    /// Asks the plugins on a deep link's path every question its resolver has, until it has a plan.
    nonisolated(nonsending) private func resolve(_ resolver: DeepLinkResolver) async throws(ResponseError) -> DeepLinkPlan {
        while true {
            switch resolver.advance() {
            case .invalid(let error):
                throw error
            case .resolved(let plan):
                return plan
            case .needs(let question):
                guard let connection = plugins?.connection(question.plugin) else {
                    resolver.resume(with: .failure(.pluginUnavailable(question.plugin, "it is not running")))
                    continue
                }
                resolver.resume(with: await connection.request(CoordinatorDeepLinkRequest.self, question.request))
            }
        }
    }
}
