import SwitchyardNavigation
import SwitchyardProtocol

// Deep links (Protocol/README.md §13): resolved against the composed route tables (asking the plugins whose types
// resolve links themselves), then applied as one chain in the same flow.
extension Navigator {
    /// Validates a deep link (dry run) and, if `apply`, applies it as one chain.
    func open(
        _ url: String, apply: Bool
    ) async throws(ResponseError) -> (plan: DeepLinkPlan, result: NavigateRequest.Result?) {
        let link = try DeepLinkURL(parsing: url, limits: requestLimits)
        let plan = try await resolve(DeepLinkResolver(link: link, tree: tree, registry: registry))
        guard apply else { return (plan, nil) }
        return (plan, try await navigate(from: plan.start, steps: plan.steps, requester: .control, links: plan.links))
    }

    /// Asks the plugins on a deep link's path every question its resolver has, until it has a plan.
    private func resolve(_ resolver: DeepLinkResolver) async throws(ResponseError) -> DeepLinkPlan {
        while true {
            switch resolver.advance() {
            case .invalid(let error):
                throw error
            case .resolved(let plan):
                return plan
            case .needs(let question):
                // Through the gate: a held, lazy or hibernated plugin is waited for (spec §20).
                switch await plugins?.session(for: question.plugin, bypassHold: false)
                    ?? .failure(.pluginUnavailable(question.plugin, "it is not running"))
                {
                case .success(let session):
                    resolver.resume(with: await session.request(CoordinatorDeepLinkRequest.self, question.request))
                case .failure(let error):
                    resolver.resume(with: .failure(error))
                }
            }
        }
    }
}
