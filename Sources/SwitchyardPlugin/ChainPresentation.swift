public import SwitchyardProtocol

// Per-call presentation (Protocol/README.md §12.8): SUICoordinator's `presentationStyle:`, Jump's `mode:`,
// Coordinator's `present(as:)`.
extension Chain {
    /// Presents the chain's last `route` step with another presentation its route allows (`@Route(.modal, also:
    /// [.fullScreen])`), and with presentation options of this call: `chain.route(to: \.player).presented(as:
    /// .fullScreen)`. The host refuses a presentation the route does not allow (`-32602`).
    public func presented(as presentation: Presentation? = nil, options: PresentationOptions? = nil) -> Chain<Current> {
        var steps = steps
        if let last = steps.indices.last, steps[last].op == .route {
            if let presentation { steps[last].transition = presentation.transition }
            if let options { steps[last].presentation = options }
        }
        return Chain(start: start, core: core, steps: steps)
    }
}

// Steps under the name of the library whose meaning they keep (Protocol/README.md §12.5).
extension Chain where Current: StackCoordinator {
    /// The Coordinator library's `pop`: the top of the shared navigation path (a pushed flow showing only its root
    /// leaves with its entry).
    public func popPath() -> Chain<Current> { adding(.popPath) }
    /// SUICoordinator's `pop`: the last push below the modals; the modals stay.
    public func popPushed() -> Chain<Current> { adding(.popPushed) }
    /// SUICoordinator's `popToRoot`: every push below the modals; the modals stay.
    public func popPushedToRoot() -> Chain<Current> { adding(.popPushedToRoot) }
}

extension Chain where Current == Remote {
    /// SUICoordinator's `forcePresentation`: the route, presented modally over everything, its tabs selected.
    public func forcePresent(_ route: String, params: JSONValue? = nil) -> Chain<Remote> {
        adding(.forcePresent(route, params))
    }
}
