import SwitchyardNavigation
import SwitchyardProtocol

// Screen actions (Protocol/README.md §12.6): a UI shell tells the host what the user did on a screen, the entry's
// owner decides where to go, and its decision is applied like any chain. Nothing here runs unless a client sends
// `user/action`.
extension Navigator {
    /// `user/action`: checks the action against the route's declaration, asks the owner (`coordinator/action`), and
    /// applies the steps it answers as one chain on that instance, as the owner's own `navigate` (ownership rules
    /// apply). No steps: nothing changes and the revision stays.
    func action(_ params: UserActionRequest.Params) async throws(ResponseError) -> NavigateRequest.Result {
        try requestLimits.check(params: params.params, field: "params")
        let question = try tree.actionQuestion(params, registry: registry)
        // Through the gate: a held, lazy or hibernated plugin is waited for (spec §20), as a chain waits for it.
        let reached =
            await plugins?.session(for: question.plugin, bypassHold: false)
            ?? .failure(.pluginUnavailable(question.plugin, "it is not running"))
        let session = try reached.get()
        let steps = try await session.request(CoordinatorActionRequest.self, question.request).get().steps ?? []
        guard !steps.isEmpty else { return NavigateRequest.Result(revision: tree.revision, instance: params.instance) }
        let note = ChangeNote(
            cause: .action,
            summary:
                "\(question.request.action) on entry \(question.request.entry) ('\(question.request.route)') of #\(params.instance.rawValue): "
                + Self.summary(of: steps))
        return try await navigate(from: params.instance, steps: steps, requester: .plugin(question.plugin), note: note)
    }
}
