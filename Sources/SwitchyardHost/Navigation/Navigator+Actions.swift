import SwitchyardNavigation
import SwitchyardProtocol

// Screen actions (Protocol/README.md §12.6): a UI shell tells the host what the user did on a screen, the entry's
// owner decides where to go, and its decision is applied like any chain. Nothing here runs unless a client sends
// `user/action`.
extension Navigator {
    /// `user/action`: checks the action against the route's declaration, asks the owner (`coordinator/action`), and
    /// applies the steps it answers as one chain on that instance, as the owner's own `navigate` (ownership rules
    /// apply). No steps: nothing changes and the revision stays.
    func action(_ params: UserActionRequest.Params, _ completion: @escaping (Result<NavigateRequest.Result, ResponseError>) -> Void) {
        let question: ActionQuestion
        do throws(ResponseError) {
            try requestLimits.check(params: params.params, field: "params")
            question = try tree.actionQuestion(params, registry: registry)
        } catch {
            completion(.failure(error))
            return
        }
        guard let connection = plugins?.connection(question.plugin) else {
            completion(.failure(.pluginUnavailable(question.plugin, "it is not running")))
            return
        }
        startFlow {
            let answer = await connection.request(CoordinatorActionRequest.self, question.request)
            let steps: [NavigationStep]
            switch answer {
            case .failure(let error):
                completion(.failure(error))
                return
            case .success(let result):
                steps = result.steps ?? []
            }
            guard !steps.isEmpty else {
                completion(.success(NavigateRequest.Result(revision: self.tree.revision, instance: params.instance)))
                return
            }
            await self.navigating(from: params.instance, steps: steps, requester: .plugin(question.plugin), completion)
        } stopped: {
            completion(.failure(ResponseError(.internalError, "the host is stopping")))
        }
    }
}
