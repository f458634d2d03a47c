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

    /// What a deep link that may wait became: applied now, or waiting for a condition (§13.5).
    enum LinkAttempt {
        case applied(NavigateRequest.Result)
        /// It waits `until` the condition holds; `redirect` is what the guard that deferred it asks to show meanwhile.
        case waits(until: DeferCondition, redirect: Redirect?)
    }

    /// A guard's redirect: steps from the instance whose route it refused, as its plugin would navigate.
    struct Redirect {
        let start: InstanceID
        let plugin: String
        let steps: [NavigationStep]
    }

    /// Opens a deep link that may wait: resolved by the dry run that may defer (a root that is not active, a tab not
    /// shown yet), then applied as one chain; a guard's deferral on the way (`data.defer`) makes it wait too. What
    /// fails otherwise is thrown, as `open` fails.
    func attempt(_ url: String) async throws(ResponseError) -> LinkAttempt {
        let link = try DeepLinkURL(parsing: url, limits: requestLimits)
        let plan = try await resolve(DeepLinkResolver(link: link, tree: tree, registry: registry, deferrable: true))
        if let until = plan.until { return .waits(until: until, redirect: nil) }
        do {
            return .applied(
                try await navigate(from: plan.start, steps: plan.steps, requester: .control, links: plan.links))
        } catch {
            guard let deferral = try LinkDeferral(refusal: error) else { throw error }
            // The hop the guard refused (§7: `rejectedByGuard` names it); a condition that names no coordinator is
            // about that one, or, when the failed chain had created it, about its type.
            let data = error.data
            let hop = data?["instance"]?.intValue.flatMap { tree[InstanceID($0)] }
            let plugin = data?["plugin"]?.stringValue
            let type = (data?["coordinatorType"] ?? data?["type"])?.stringValue
            var until = deferral.until
            if until.instance == nil && until.type == nil {
                if let hop { until.instance = hop.id } else { (until.plugin, until.type) = (plugin, type) }
            } else if until.type != nil, until.plugin == nil {
                until.plugin = plugin
            }
            let redirect = deferral.redirect.flatMap { steps -> Redirect? in
                guard let hop, !steps.isEmpty else { return nil }
                return Redirect(start: hop.id, plugin: hop.plugin, steps: steps)
            }
            return .waits(until: until, redirect: redirect)
        }
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
