import SwitchyardProtocol

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
