import SwitchyardProtocol

/// How the CLI words a deferred deep link and what became of it (Protocol/README.md §13.5).
enum DeferredLinkText {
    /// "switchyard://todos/todo/42 waits until root 'authenticated' of #1 is active (at most 300 s, link 1)".
    static func describe(_ link: DeferredDeepLink) -> String {
        "\(link.url) waits until \(link.until) (at most \(seconds(link.deferMs)), link \(link.id))"
    }

    /// One line for a `deepLink/changed`.
    static func describe(_ change: DeepLinkChangedNotification.Params) -> String {
        switch change.state {
        case .pending: "waits until \(change.link.until)"
        case .applied: "applied, revision \(change.revision.map(String.init) ?? "?")"
        case .replaced: "replaced by \(change.replacedBy ?? "a newer link")"
        case .timedOut: "timed out after \(seconds(change.link.deferMs))"
        case .cancelled: "cancelled"
        case .invalid: "invalid after all: \(change.error?.message ?? "?")"
        }
    }

    private static func seconds(_ milliseconds: Int) -> String {
        milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
