import SwitchyardProtocol

// Dynamic tabs and badges (Protocol/README.md §12.7; SUICoordinator's `setPages` and `setBadge`), from a tabs
// coordinator's own logic.

extension Chain where Current: TabsCoordinator {
    /// The tabs become these, in this order: new ones are asked of this coordinator (their `@Tab` factories), the
    /// others leave the tree. Name them with ``TabsCoordinator/tab(_:)``: `setTabs([tab(\.todos), tab(\.inbox)])`.
    public func setTabs(_ tabs: [String]) -> Chain<Current> { adding(.setTabs(tabs)) }
    /// A tab's badge; nil clears it.
    public func setBadge(_ tab: String, _ badge: String?) -> Chain<Current> { adding(.setBadge(tab, badge)) }
}

extension Chain where Current == Remote {
    /// A tab's badge on another plugin's tabs coordinator above one of this plugin's instances (the tab it shows).
    public func setBadge(_ tab: String, _ badge: String?) -> Chain<Remote> { adding(.setBadge(tab, badge)) }
}

extension Router where C: TabsCoordinator {
    /// The tabs become these, in this order (see ``Chain/setTabs(_:)``).
    @discardableResult public func setTabs(_ tabs: [String]) async throws -> Landed<C> {
        try await chain.setTabs(tabs).apply()
    }
    /// A tab's badge; nil clears it.
    @discardableResult public func setBadge(_ tab: String, _ badge: String?) async throws -> Landed<C> {
        try await chain.setBadge(tab, badge).apply()
    }
}
