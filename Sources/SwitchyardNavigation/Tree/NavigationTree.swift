import HashTreeCollections
public import SwitchyardProtocol

/// What an entry shows: a screen, or a child coordinator instance.
public enum Content: Sendable, Hashable {
    case screen(ScreenDescriptor)
    case coordinator(InstanceID)

    public var coordinator: InstanceID? {
        if case .coordinator(let id) = self { return id }
        return nil
    }
}

/// One entry: a stack's root, a pushed or presented route, a tab, or a wrapper's child.
public struct Entry: Sendable, Hashable {
    public let id: EntryID
    public var route: String
    public var transition: Transition
    public var params: JSONValue?
    public var content: Content
    /// A tab's badge (`setBadge`).
    public var badge: String? {
        get { rare?.value.badge }
        set { rare = Rare.boxed(badge: newValue, presentation: presentation) }
    }
    /// Presentation options for the UI shell (the route's declared ones, or the `route` step's).
    public var presentation: PresentationOptions? {
        get { rare?.value.presentation }
        set { rare = Rare.boxed(badge: badge, presentation: newValue) }
    }
    /// The badge and presentation, out of line: few entries have either, and inline they cost every entry (every
    /// stack's root among them) 48 bytes.
    private var rare: Boxed<Rare>?

    private struct Rare: Hashable, Sendable {
        var badge: String?
        var presentation: PresentationOptions?

        /// Nil when there is neither, so entries that differ only in how they were built compare equal.
        static func boxed(badge: String?, presentation: PresentationOptions?) -> Boxed<Rare>? {
            badge == nil && presentation == nil ? nil : Boxed(Rare(badge: badge, presentation: presentation))
        }
    }

    public init(
        id: EntryID, route: String, transition: Transition, params: JSONValue?, content: Content, badge: String? = nil,
        presentation: PresentationOptions? = nil
    ) {
        self.id = id
        self.route = route
        self.transition = transition
        self.params = params
        self.content = content
        rare = Rare.boxed(badge: badge, presentation: presentation)
    }
}

/// A coordinator instance: a node of the navigation tree.
public struct Instance: Sendable, Hashable {
    public let id: InstanceID
    public let plugin: String
    public let type: String
    /// Nil for a placeholder its plugin has not created yet (see ``isPending``); set when the plugin creates it.
    public internal(set) var kind: CoordinatorKind?
    public var parent: InstanceSnapshot.ParentLink?
    public var params: JSONValue?
    /// Opaque state the plugin attached (handed back when the instance is restored).
    public var state: JSONValue?
    /// `stack`: the root entry.
    public var root: Entry?
    /// `stack`: pushed and presented entries, bottom first.
    public var entries: [Entry] = []
    /// `tabs`: the tabs in declaration order.
    public var tabs: [Entry] = []
    /// `tabs`: index of the selected tab.
    public var selectedTab = 0
    /// `wrapper`: the one child. Held out of line: only wrappers have one.
    public var child: Entry? {
        get { boxedChild?.value }
        set { boxedChild = newValue.map(Boxed.init) }
    }
    private var boxedChild: Boxed<Entry>?
    /// `tabs`: the owner chose the tabs at run time (`setTabs`, or created with other tabs than declared), so a
    /// state file's merge keeps them as they are instead of restoring the declared set.
    public var dynamicTabs = false
    /// The revision at which this instance last changed (optimistic concurrency between chains).
    public var version: UInt64

    public init(
        id: InstanceID, plugin: String, type: String, kind: CoordinatorKind?, parent: InstanceSnapshot.ParentLink?,
        params: JSONValue?, version: UInt64
    ) {
        self.id = id
        self.plugin = plugin
        self.type = type
        self.kind = kind
        self.parent = parent
        self.params = params
        self.version = version
    }

    /// A placeholder: opened as part of another coordinator's initial content (a tab, a stack's root, a wrapper's
    /// child) while its plugin was not serving, so that one missing plugin does not fail the whole coordinator. It
    /// holds no content, navigating into it fails with `pluginUnavailable`, and it is created in its plugin
    /// (`coordinator/create`, reason `new`) once that plugin is ready.
    public var isPending: Bool { kind == nil }

    /// Every entry that can hold a child: root, entries, tabs, child.
    public var allEntries: [Entry] {
        var result: [Entry] = []
        if let root { result.append(root) }
        result += entries
        result += tabs
        if let child { result.append(child) }
        return result
    }

    /// Child coordinator instances, in display order.
    public var children: [InstanceID] {
        var result: [InstanceID] = []
        forEachChild { result.append($0) }
        return result
    }

    /// Calls `body` with each child coordinator instance, in display order, without building ``allEntries`` (which
    /// copies every entry: a walk of the whole tree, as a snapshot makes, spent most of its time there).
    public func forEachChild(_ body: (InstanceID) -> Void) {
        if case .coordinator(let id)? = root?.content { body(id) }
        for index in entries.indices { if case .coordinator(let id) = entries[index].content { body(id) } }
        for index in tabs.indices { if case .coordinator(let id) = tabs[index].content { body(id) } }
        if case .coordinator(let id)? = child?.content { body(id) }
    }

    public var selectedTabEntry: Entry? { tabs.indices.contains(selectedTab) ? tabs[selectedTab] : nil }

    /// The entry with this id, wherever it sits. Searched in place: ``allEntries`` would copy every entry, and a
    /// restore looks up the parent entry of each child (a stack of 1,000 children made that quadratic).
    public func entry(_ id: EntryID) -> Entry? {
        if let root, root.id == id { return root }
        if let found = entries.first(where: { $0.id == id }) ?? tabs.first(where: { $0.id == id }) { return found }
        if let child, child.id == id { return child }
        return nil
    }
}

/// The authoritative navigation tree: a value, cheap to copy (instances live in a persistent hash trie, so a copy is
/// O(1) and a change copies only the path it touches) and to snapshot.
///
/// Operations are O(depth): they look instances up by id and never walk unrelated parts of the tree.
public struct NavigationTree: Sendable, Equatable {
    public internal(set) var revision: UInt64 = 0
    public internal(set) var rootID: InstanceID?
    /// Boxed: see ``Boxed``.
    var instances = TreeDictionary<InstanceID, Boxed<Instance>>()
    /// Instances per plugin, kept with every put and remove so limits and restores need no scan.
    private(set) var countsByPlugin: [String: Int] = [:]
    /// Id counters, persisted with the tree so ids are never reused across host restarts.
    public internal(set) var nextInstanceID: Int64 = 1
    public internal(set) var nextEntryID: Int64 = 1

    public init() {}

    public var count: Int { instances.count }
    public subscript(id: InstanceID) -> Instance? { instances[id]?.value }
    public var root: Instance? { rootID.flatMap { self[$0] } }
    public var allInstances: [Instance] { instances.values.map(\.value) }

    /// The instances of `plugin`. O(n): for restores and checks, not for the navigation path.
    public func instances(of plugin: String) -> [Instance] {
        guard countsByPlugin[plugin, default: 0] > 0 else { return [] }
        return instances.values.compactMap { $0.value.plugin == plugin ? $0.value : nil }
    }

    /// The placeholders of `plugin` (``Instance/isPending``), parents before children. O(n), like ``instances(of:)``.
    public func pendingInstances(of plugin: String) -> [InstanceID] {
        parentsFirst(instances(of: plugin).filter(\.isPending)).map(\.id)
    }

    /// How many instances `plugin` owns. O(1).
    public func instanceCount(of plugin: String) -> Int { countsByPlugin[plugin, default: 0] }

    /// One instance as a snapshot (what a restarted plugin receives as `restore`).
    public func snapshot(of id: InstanceID) -> InstanceSnapshot? { self[id]?.snapshot { _ in (.ok, nil) } }

    /// The instance's ancestors, nearest first.
    public func ancestors(of id: InstanceID) -> [InstanceID] {
        var result: [InstanceID] = []
        var current = self[id]?.parent?.instance
        while let next = current, result.count < 10_000 {
            result.append(next)
            current = self[next]?.parent?.instance
        }
        return result
    }

    /// Distance from the root (the root is 0).
    public func depth(of id: InstanceID) -> Int { ancestors(of: id).count }

    /// The instance and all its descendants, deepest first (children before their parent).
    public func subtree(of id: InstanceID) -> [InstanceID] {
        var result: [InstanceID] = []
        func visit(_ node: InstanceID, _ level: Int) {
            guard level < 10_000, let instance = self[node] else { return }
            for child in instance.children.reversed() { visit(child, level + 1) }
            result.append(node)
        }
        visit(id, 0)
        return result
    }

    // MARK: - Low-level editing (used by the chain runner and by restore)

    mutating func put(_ instance: Instance) {
        if instances.updateValue(Boxed(instance), forKey: instance.id) == nil {
            countsByPlugin[instance.plugin, default: 0] += 1
        }
    }

    mutating func remove(_ id: InstanceID) {
        if let removed = instances.removeValue(forKey: id) { countsByPlugin[removed.value.plugin, default: 0] -= 1 }
    }
    mutating func setRoot(_ id: InstanceID?) { rootID = id }

    /// Reserves the ids used so far by an allocator, so they are never reused.
    mutating func absorb(_ allocator: IDAllocator) {
        nextInstanceID = max(nextInstanceID, allocator.nextInstance)
        nextEntryID = max(nextEntryID, allocator.nextEntry)
    }
}

/// Hands out instance and entry ids, shared by every chain of a host so concurrent chains never collide.
///
/// A class, so the chains in flight share one counter; not `Sendable`, so the compiler keeps it in the region of
/// whoever owns it (the host's navigator on its loop, a test, the conformance checker's session), with the chain
/// runners it is handed to. Package-internal: ids are the host's to give.
package final class IDAllocator {
    package private(set) var nextInstance: Int64
    package private(set) var nextEntry: Int64

    package init(nextInstance: Int64 = 1, nextEntry: Int64 = 1) {
        self.nextInstance = nextInstance
        self.nextEntry = nextEntry
    }

    package convenience init(continuing tree: NavigationTree) {
        self.init(nextInstance: tree.nextInstanceID, nextEntry: tree.nextEntryID)
    }

    package func instance() -> InstanceID {
        defer { nextInstance += 1 }
        return InstanceID(nextInstance)
    }

    package func entry() -> EntryID {
        defer { nextEntry += 1 }
        return EntryID(nextEntry)
    }
}

// MARK: - Snapshots

extension NavigationTree {
    /// A plugin's availability, for placeholders in snapshots.
    public typealias Availability = (String) -> (status: InstanceSnapshot.Status, reason: String?)

    /// The tree as the protocol publishes it: every instance in depth-first order from the root (then any instance
    /// not reachable from it, by id), so the encoding is deterministic.
    public func snapshot(availability: Availability = { _ in (.ok, nil) }) -> TreeSnapshot {
        TreeSnapshot(revision: revision, root: rootID, instances: orderedInstances.map { $0.snapshot(availability) })
    }

    /// The instances in snapshot order (see ``snapshot(availability:)``).
    public var orderedInstances: [Instance] {
        var ordered: [Instance] = []
        ordered.reserveCapacity(instances.count)
        visitInSnapshotOrder { ordered.append($0) }
        return ordered
    }

    /// The ids of ``orderedInstances``: what a cached or incremental encoding of the snapshot walks, so it lists the
    /// instances exactly as the snapshot does, without holding a copy of every instance (~500 bytes each).
    public var orderedIDs: [InstanceID] {
        var ordered: [InstanceID] = []
        ordered.reserveCapacity(instances.count)
        visitInSnapshotOrder { ordered.append($0.id) }
        return ordered
    }

    private func visitInSnapshotOrder(_ body: (Instance) -> Void) {
        var seen = Set<InstanceID>(minimumCapacity: instances.count)
        func visit(_ id: InstanceID, _ level: Int) {
            guard level < 10_000, let instance = self[id], seen.insert(id).inserted else { return }
            body(instance)
            instance.forEachChild { visit($0, level + 1) }
        }
        if let rootID { visit(rootID, 0) }
        if seen.count < instances.count {
            for id in instances.keys.sorted() where !seen.contains(id) { visit(id, 0) }
        }
    }

    /// Rebuilds a tree from a snapshot (state files, tests). The snapshot's ids and revision are kept.
    public init(snapshot: TreeSnapshot, nextInstanceID: Int64? = nil, nextEntryID: Int64? = nil) throws(ResponseError) {
        self.init()
        revision = snapshot.revision
        rootID = snapshot.root
        var maxInstance: Int64 = 0
        var maxEntry: Int64 = 0
        for item in snapshot.instances {
            var instance = Instance(
                id: item.id, plugin: item.plugin, type: item.type, kind: item.kind, parent: item.parent,
                params: item.params, version: snapshot.revision)
            instance.state = item.state
            // A placeholder holds nothing: whatever a hand-edited file puts there would never have been created.
            guard !instance.isPending else {
                guard instances[item.id] == nil else { throw .invalidSnapshot("instance \(item.id) appears twice") }
                instance.compactJSON()
                put(instance)
                maxInstance = max(maxInstance, item.id.rawValue)
                continue
            }
            instance.root = item.root.map(Entry.init(snapshot:))
            instance.entries = (item.entries ?? []).map(Entry.init(snapshot:))
            instance.tabs = (item.tabs ?? []).map(Entry.init(snapshot:))
            instance.selectedTab = item.selectedTab.flatMap { tab in instance.tabs.firstIndex { $0.route == tab } } ?? 0
            instance.dynamicTabs = item.dynamicTabs == true
            instance.child = item.child.map(Entry.init(snapshot:))
            instance.compactJSON()
            guard instances[item.id] == nil else { throw .invalidSnapshot("instance \(item.id) appears twice") }
            put(instance)
            maxInstance = max(maxInstance, item.id.rawValue)
            for entry in instance.allEntries { maxEntry = max(maxEntry, entry.id.rawValue) }
        }
        // Every reference must resolve and agree with the child's parent link.
        for instance in instances.values.lazy.map(\.value) {
            for entry in instance.allEntries {
                guard let child = entry.content.coordinator else { continue }
                guard let target = self[child] else {
                    throw .invalidSnapshot(
                        "instance \(instance.id) entry \(entry.id) refers to missing instance \(child)")
                }
                guard target.parent == InstanceSnapshot.ParentLink(instance: instance.id, entry: entry.id) else {
                    throw .invalidSnapshot("instance \(child) does not name \(instance.id)/\(entry.id) as its parent")
                }
            }
        }
        if let rootID, instances[rootID] == nil { throw .invalidSnapshot("the root \(rootID) is missing") }
        self.nextInstanceID = max(nextInstanceID ?? 0, maxInstance + 1)
        self.nextEntryID = max(nextEntryID ?? 0, maxEntry + 1)
    }
}

extension Instance {
    /// The instance as snapshots list it, its status taken from `availability`.
    public func snapshot(_ availability: NavigationTree.Availability) -> InstanceSnapshot {
        var (status, reason) = availability(plugin)
        if isPending {
            status = .unavailable
            reason = reason ?? "plugin '\(plugin)' has not created it yet"
        }
        return InstanceSnapshot(
            id: id, plugin: plugin, type: type, kind: kind, pending: isPending ? true : nil, parent: parent,
            params: params, state: state,
            status: status, unavailableReason: reason,
            root: kind == .stack ? root?.snapshot : nil,
            entries: kind == .stack ? entries.map(\.snapshot) : nil,
            tabs: kind == .tabs ? tabs.map(\.snapshot) : nil,
            selectedTab: kind == .tabs ? selectedTabEntry?.route : nil,
            child: kind == .wrapper ? child?.snapshot : nil, dynamicTabs: dynamicTabs ? true : nil)
    }
}

extension Entry {
    var snapshot: EntrySnapshot {
        EntrySnapshot(
            entry: id, route: route, transition: transition, params: params,
            content: {
                switch content {
                case .screen(let screen): .screen(screen)
                case .coordinator(let id): .coordinator(id)
                }
            }(), badge: badge, presentation: presentation)
    }

    init(snapshot: EntrySnapshot) {
        let content: Content =
            switch snapshot.content {
            case .screen(let screen): .screen(screen)
            case .coordinator(let id): .coordinator(id)
            }
        self.init(
            id: snapshot.entry, route: snapshot.route, transition: snapshot.transition, params: snapshot.params,
            content: content,
            badge: snapshot.badge, presentation: snapshot.presentation)
    }
}
