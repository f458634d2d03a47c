import SwitchyardProtocol
import Synchronization

// The host's own faults (§22.2): a kill and its restart on the same state file, a full disk under that file. The host
// runs as a child (``ChildHost``); what each step saw is recorded as `host` events, which the host checker and the
// epochs of the revision and model checkers read.
extension ChaosExperiment {
    /// Runs one step of a host fault. A full disk's steps return a task that watches for the host's word on its state
    /// file, so the schedule goes on meanwhile.
    func hostFault(_ fault: ScheduledFault, heal: Bool, _ child: ChildHost) async -> Task<Void, Never>? {
        switch (fault.kind, heal) {
        case (.hostKill, false):
            let written = await child.kill()
            // What the host published before it died is recorded before its death is.
            await child.flushEvents()
            record { time in
                var event = HistoryEvent(type: .host, time: time)
                event.state = "killed"
                event.fault = fault.index
                event.written = written
                return event
            }
        case (.hostKill, true): await restart(child, fault: fault.index)
        case (.diskFull, false):
            let previous = child.fillDisk()
            state.withLock { $0.diskLimits[fault.index] = previous }
            // The load changes the tree all the time: the host's next write fails, and it must say so before the
            // healing step.
            let window = Duration.milliseconds(max(500, (fault.healMs ?? 0) - fault.startMs))
            return Task {
                await self.watchStateFile(fault, child, for: window, "stateFileFailing") { file in
                    guard file.failures > 0 else { return nil }
                    return (file.error, file.writtenRevision)
                }
            }
        case (.diskFull, true):
            child.freeDisk(to: state.withLock { $0.diskLimits[fault.index] ?? nil })
            return Task {
                await self.watchStateFile(fault, child, for: .seconds(10), "stateFileWritten") { file in
                    file.failures == 0 && file.error == nil ? (nil, file.writtenRevision) : nil
                }
            }
        default: break
        }
        return nil
    }

    /// Watches, for at most `window`, the host's word on its state file (`host/status`) until `matches` takes it,
    /// and records a `host` event `state` with what it returned (a reason, a revision).
    private func watchStateFile(
        _ fault: ScheduledFault, _ child: ChildHost, for window: Duration, _ state: String,
        _ matches: (HostStatusRequest.StateFile) -> (reason: String?, revision: UInt64?)?
    ) async {
        let until = ContinuousClock.now + window
        while ContinuousClock.now < until, !Task.isCancelled {
            if let file = await child.stateFile(), let seen = matches(file) {
                record { time in
                    var event = HistoryEvent(type: .host, time: time)
                    event.state = state
                    event.fault = fault.index
                    event.reason = seen.reason
                    event.revision = seen.revision
                    return event
                }
                return
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Starts the killed host again on its state file and records what it restored: the file's tree, compared with
    /// the tree the host had published at that revision, and the tree it then served first (the model's and the
    /// revision checker's new starting point).
    private func restart(_ child: ChildHost, fault: Int) async {
        let file = child.stateFileTree()
        let started: ChildHost.Started
        do { started = try await child.start() } catch {
            record { time in
                var event = HistoryEvent(type: .host, time: time)
                event.state = "restartFailed"
                event.fault = fault
                event.reason = "\(error)"
                return event
            }
            return
        }
        let (served, statuses) = (started.tree, started.plugins)
        let victim = spec.victimName
        state.withLock { state in
            let now = ContinuousClock.now
            var event = HistoryEvent(type: .host, time: elapsed(now, in: state))
            event.state = "restarted"
            event.fault = fault
            event.served = served.revision
            event.instance = served.instances.first { $0.plugin == victim }
            if let tree = file.tree {
                event.revision = tree.revision
                if let published = state.published[tree.revision] {
                    if Self.comparable(published) != Self.comparable(tree) {
                        event.reason =
                            "the state file's tree at revision \(tree.revision) is not the tree the host published at that revision"
                    }
                } else if tree.revision > (state.publishedOrder.min() ?? 0) {
                    event.reason =
                        "the state file holds revision \(tree.revision), which the experiment never saw published"
                }
                // Older than every tree kept (a full disk held the file back): the written-revision bound judges it.
            } else {
                event.reason = file.problem
            }
            state.history.events.append(event)
            // A plugin the new host could not start is a verdict the checkers must see, as any other.
            for plugin in statuses where plugin.state != "ready" {
                var changed = HistoryEvent(type: .plugin, time: event.time)
                changed.plugin = plugin.name
                changed.state = plugin.state
                changed.restarts = plugin.restarts
                changed.reason = plugin.error?.message
                state.history.events.append(changed)
            }
            state.hostRestarts += 1
            // A new host: its plugins' restarts count from 0, and nothing it was told to kill is pending.
            state.earlierRestarts += state.statuses.values.map(\.restarts).reduce(0, +)
            state.statuses = Dictionary(statuses.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
            state.killed = [:]
            state.lastRevision = served.revision
            Self.keep(served, in: &state)
        }
        child.resume()
    }

    /// A tree as a restored one is compared: the availability of instances is the moment's, not the tree's.
    static func comparable(_ tree: TreeSnapshot) -> TreeSnapshot {
        var tree = tree
        for index in tree.instances.indices {
            tree.instances[index].status = .ok
            tree.instances[index].unavailableReason = nil
        }
        return tree
    }
}
