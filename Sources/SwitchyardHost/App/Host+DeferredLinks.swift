import Logging
import SwitchyardNavigation
import SwitchyardProtocol
import SwitchyardUV

/// The host's deferred deep link (Protocol/README.md §13.5): the pure ``DeferredLinks`` value, the loop timer for its
/// deadline, and the navigator observer that looks at each revision while a link waits.
struct LinkWaiting {
    var links = DeferredLinks()
    var timer: UVTimer?
    var observer: Int?
}

extension Host {
    /// `open`: a link applied at once, as ever; or, with `defer` (the request's, else the manifest's), one that cannot
    /// be applied yet answered at once as pending, the guard's redirect applied, and kept until it can be.
    func openLink(_ request: OpenRequest.Params) async throws(ResponseError) -> OpenRequest.Result {
        guard request.defer ?? manifest.deepLinks?.defer ?? false else {
            guard let applied = try await navigator.open(request.url, apply: true).result else {
                throw ResponseError(.internalError, "no result")
            }
            return OpenRequest.Result(applied, replaced: supersedeWaitingLink(by: request.url))
        }
        let deferMs = request.deferMs ?? manifest.deepLinks?.deferMs ?? DeepLinkOptions.defaultDeferMs
        guard (1...DeepLinkOptions.maxDeferMs).contains(deferMs) else {
            throw ResponseError(
                .invalidParams, "deferMs is \(deferMs): a deferred link waits 1 to \(DeepLinkOptions.maxDeferMs) ms",
                data: ["field": "deferMs"])
        }
        switch try await navigator.attempt(request.url) {
        case .applied(let applied):
            return OpenRequest.Result(applied, replaced: supersedeWaitingLink(by: request.url))
        case .waits(let until, let redirect):
            let added = linkWaiting.links.add(url: request.url, until: until, deferMs: deferMs, now: loop.now)
            logger.info("deep link \(request.url) waits until \(until) (at most \(deferMs) ms)")
            announce(added.notifications)
            // Kept before the redirect, so the redirect's revision is looked at like any other.
            linksChanged()
            var landed = navigator.tree.rootID ?? InstanceID(0)
            var redirectError: ResponseError?
            if let redirect {
                do throws(ResponseError) {
                    landed = try await navigator.navigate(
                        from: redirect.start, steps: redirect.steps, requester: .plugin(redirect.plugin)
                    ).instance
                } catch {
                    logger.warning("the redirect of deep link \(request.url) failed: \(error.message)")
                    redirectError = error
                }
            }
            // The tree may have changed while the link was resolved (a plugin answered its dry run meanwhile): its
            // condition may hold already, with no revision to come.
            treeChangedForLinks()
            return OpenRequest.Result(
                revision: navigator.tree.revision, instance: landed, deferred: added.link, replaced: added.replaced,
                redirectError: redirectError)
        }
    }

    /// `deepLink/cancel`.
    func cancelLink(_ id: Int?) -> DeepLinkCancelRequest.Result {
        let (cancelled, notifications) = linkWaiting.links.cancel(id: id)
        announce(notifications)
        linksChanged()
        return DeepLinkCancelRequest.Result(cancelled: cancelled)
    }

    /// The link waiting now (`deepLink/pending`).
    var pendingLink: DeferredDeepLink? { linkWaiting.links.pending }

    /// Stops the deadline timer with the loop.
    func closeLinkTimer() {
        linkWaiting.timer?.close()
        linkWaiting.timer = nil
    }

    /// A link applied at once replaces the one waiting: the user's newest link is where they mean to go.
    private func supersedeWaitingLink(by url: String) -> DeferredDeepLink? {
        let (replaced, notifications) = linkWaiting.links.supersede(by: url)
        announce(notifications)
        linksChanged()
        return replaced
    }

    /// After each revision while a link waits: the link whose condition holds is tried, as a chain of its own.
    private func treeChangedForLinks() {
        guard !shuttingDown, let link = linkWaiting.links.linkToTry(in: navigator.tree) else { return }
        linksChanged()
        spawn { await self.tryLink(link) }
    }

    /// Resolves the link again (the dry run) and applies it as its own revision; a guard may defer it once more.
    private func tryLink(_ link: DeferredDeepLink) async {
        let outcome: DeferredLinks.TryOutcome
        do throws(ResponseError) {
            switch try await navigator.attempt(link.url) {
            case .applied(let result): outcome = .applied(revision: result.revision, instance: result.instance)
            case .waits(let until, _): outcome = .deferred(until)
            }
        } catch {
            outcome = .failed(error)
        }
        announce(linkWaiting.links.tried(link.id, outcome: outcome, tree: navigator.tree, now: loop.now))
        linksChanged()
        // A revision that came while it was tried (or a newer link waiting since) is looked at now.
        treeChangedForLinks()
    }

    /// Tells observers (control clients, the studio, `HostHandle.events()`) and the log.
    private func announce(_ notifications: [DeepLinkChangedNotification.Params]) {
        for change in notifications {
            let detail = change.error.map { ": \($0.message)" } ?? change.replacedBy.map { " by \($0)" } ?? ""
            logger.info("deep link \(change.link.url): \(change.state.rawValue)\(detail)")
            navigator.publish(.deepLinkChanged(change))
        }
    }

    /// Watches the tree while a link waits, and arms the timer for its deadline.
    private func linksChanged() {
        let links = linkWaiting.links
        if links.watchesTree, linkWaiting.observer == nil {
            linkWaiting.observer = navigator.observe { event in
                if case .treeChanged = event { self.treeChangedForLinks() }
            }
        } else if !links.watchesTree, let token = linkWaiting.observer {
            navigator.stopObserving(token)
            linkWaiting.observer = nil
        }
        // Once the host stops, no timer is armed: the loop must be free to end (a waiting link is not kept).
        guard !closed, !shuttingDown else { return }
        guard let deadline = links.nextDeadline else {
            linkWaiting.timer?.stop()
            return
        }
        let now = loop.now
        do throws(UVError) {
            if linkWaiting.timer == nil { linkWaiting.timer = try UVTimer(loop: loop) }
            try linkWaiting.timer?.start(after: deadline > now ? deadline - now : 0) {
                self.announce(self.linkWaiting.links.expire(now: self.loop.now))
                self.linksChanged()
            }
        } catch {
            // Without a timer the link still waits and is still applied; only its deadline is not kept.
            logger.error("cannot arm the deferred deep link's deadline: \(error)")
        }
    }
}
