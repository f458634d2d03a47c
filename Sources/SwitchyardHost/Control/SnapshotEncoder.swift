import SwitchyardNavigation
import SwitchyardProtocol

/// Encodes tree snapshots, reusing what the last one encoded, and the change from the last snapshot it published to
/// the next as a JSON Patch (RFC 6902) for the clients that subscribed with `deltas` (spec §15).
///
/// Why reuse: a snapshot of a 1,000-instance tree is ~1.4 MiB of JSON, and a change touches one or two instances.
/// Encoding an instance goes through `Encodable` (the snapshot structs are built, then written); copying its bytes
/// is a `memcpy`. The cache is the last snapshot itself, kept whole with where each instance's JSON sits in it and
/// the version it was encoded from: no second copy of the JSON, and the same tree asked for again gets the same bytes.
///
/// Why patches per instance and not a generic JSON diff: the snapshot is a flat list of instances in a stable order
/// (depth-first from the root), and a change replaces a few of them and inserts or removes one contiguous run (the
/// subtree a push opened or a pop closed). Comparing the two id sequences from both ends and the instances in place
/// finds that in one pass, without building or walking the two documents.
///
/// What it holds between requests, at 10,000 instances: the last snapshot (~375 bytes an instance), its index
/// (24 bytes an instance), the ids in snapshot order, and for deltas the published tree (a persistent structure:
/// what it shares with the current tree costs nothing) with each id's position. Never a copy of the instances.
///
/// Nothing here runs unless a client asks for a snapshot or watches with deltas: the navigation path does not see
/// it.
///
/// - Important: Loop thread only.
final class SnapshotEncoder {
    /// An instance's availability as snapshots show it (`status`, `unavailableReason`).
    private struct Status: Equatable {
        var status: InstanceSnapshot.Status
        var reason: String?
    }

    /// Where an instance's JSON sits in the last snapshot, and its ``Instance/version`` then (every commit that
    /// changes an instance stamps it with the new revision; a tree read from a state file starts with no snapshot).
    private struct Slot {
        let id: InstanceID
        let version: UInt64
        let start: UInt32
        let count: UInt32
    }

    /// The last snapshot encoded, whole, and what it was encoded from: the tree (``Navigator/treeEpoch``), its
    /// revision, and each plugin's availability.
    private struct Encoded {
        let epoch: Int
        let revision: UInt64
        let bytes: [UInt8]
        let slots: [Slot]
        let statuses: [String: Status]
    }

    /// The snapshot the last patch led to: the base of the next one.
    private struct Published {
        var revision: UInt64
        var epoch: Int
        var root: InstanceID?
        var tree: NavigationTree
        var ids: [InstanceID]
        var positions: [InstanceID: Int]
        var statuses: [String: Status]
    }

    /// The last walk of the tree in snapshot order, and which tree it walked.
    private struct Walk {
        let epoch: Int
        let ids: [InstanceID]
    }

    /// What a watcher with deltas receives: the patch from the tree of ``base`` to this one.
    struct Delta {
        /// The published snapshot this patch applies to (what its watchers hold).
        let baseGeneration: Int
        /// The published snapshot it leads to.
        let generation: Int
        let base: UInt64
        let revision: UInt64
        /// `tree/changed` params: `{revision, base, patch}`.
        let params: [UInt8]
    }

    private var last: Encoded?
    private var published: Published?
    private var walk: Walk?
    /// Bumped each time the published snapshot changes: a watcher holds generation N or must get a full snapshot.
    private(set) var generation = 0

    /// The snapshot of `tree` (as `schema/tree.json`), encoded.
    func snapshot(
        of tree: NavigationTree, epoch: Int, availability: @escaping NavigationTree.Availability
    ) throws -> [UInt8] {
        var statuses = StatusMemo(availability)
        if let last, last.epoch == epoch, statuses.agree(with: last.statuses) { return last.bytes }
        return try encode(tree, epoch: epoch, ids: order(of: tree, epoch: epoch), statuses: &statuses)
    }

    /// The tree's instance ids in snapshot order, walked once per version of the tree.
    private func order(of tree: NavigationTree, epoch: Int) -> [InstanceID] {
        if let walk, walk.epoch == epoch { return walk.ids }
        let ids = tree.orderedIDs
        walk = Walk(epoch: epoch, ids: ids)
        return ids
    }

    /// Stops tracking a published snapshot once no watcher with deltas is left: the published tree would otherwise
    /// keep every instance changed since alive. A watcher that subscribes later publishes afresh.
    func retire() {
        guard published != nil else { return }
        published = nil
        generation += 1
    }

    /// Makes `tree` the published snapshot and returns the patch from the previous one (nil when there was none, or
    /// when nothing changed: then the generation stays, and watchers holding it stay in step).
    ///
    /// `touched` (from the commit that made `tree`, one revision after the published one): when it changed no
    /// instance's place (no instance came or went), the patch replaces those instances in place, without walking the
    /// tree: a change to one entry costs the same in a tree of 20 instances and of 10,000.
    func publish(
        _ tree: NavigationTree, epoch: Int, touched: Set<InstanceID>? = nil,
        availability: @escaping NavigationTree.Availability
    ) throws -> Delta? {
        var statuses = StatusMemo(availability)
        if let touched, let delta = try patchInPlace(to: tree, epoch: epoch, touched: touched, &statuses) {
            return delta
        }
        let ids = order(of: tree, epoch: epoch)
        func publishing() -> Published {
            var positions: [InstanceID: Int] = [:]
            positions.reserveCapacity(ids.count)
            for (index, id) in ids.enumerated() { positions[id] = index }
            return Published(
                revision: tree.revision, epoch: epoch, root: tree.rootID, tree: tree, ids: ids, positions: positions,
                statuses: statuses.known)
        }
        guard let old = published else {
            for id in ids { if let instance = tree[id] { _ = statuses.of(instance.plugin) } }
            published = publishing()
            generation += 1
            return nil
        }
        do {
            let delta = try patch(from: old, to: tree, ids, &statuses)
            published = publishing()
            return delta
        } catch {
            // What the watchers hold is no longer known: each gets a full snapshot next.
            published = nil
            generation += 1
            throw error
        }
    }

    private func patch(
        from old: Published, to tree: NavigationTree, _ after: [InstanceID], _ statuses: inout StatusMemo
    ) throws -> Delta? {
        var ops = JSONWriter(capacity: 256)
        var count = 0
        func op(_ name: String, _ path: String, value: (inout JSONWriter) throws -> Void) rethrows {
            ops.writeRaw(count == 0 ? "{\"op\":\"" : ",{\"op\":\"")
            ops.writeRaw(name)
            ops.writeRaw("\",\"path\":\"")
            ops.writeRaw(path)
            ops.writeRaw("\",\"value\":")
            try value(&ops)
            ops.append(UInt8(ascii: "}"))
            count += 1
        }
        func remove(_ path: String) {
            ops.writeRaw(count == 0 ? "{\"op\":\"remove\",\"path\":\"" : ",{\"op\":\"remove\",\"path\":\"")
            ops.writeRaw(path)
            ops.writeRaw("\"}")
            count += 1
        }
        if old.revision != tree.revision {
            op("replace", "/revision") { $0.writeInteger(Int64(bitPattern: tree.revision)) }
        }
        if old.root != tree.rootID {
            if let root = tree.rootID {
                op(old.root == nil ? "add" : "replace", "/root") { $0.writeInteger(root.rawValue) }
            } else {
                remove("/root")
            }
        }
        // The run that differs: what lies between the longest common prefix and suffix of the two id sequences.
        let before = old.ids
        var prefix = 0
        while prefix < before.count, prefix < after.count, before[prefix] == after[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < before.count - prefix, suffix < after.count - prefix,
            before[before.count - 1 - suffix] == after[after.count - 1 - suffix]
        {
            suffix += 1
        }
        // Applied in order: replacements in the prefix (same index before and after), the run removed and the new
        // one added at its place, then replacements in the suffix at their new indices.
        func replaceIfChanged(_ index: Int) throws {
            guard let instance = tree[after[index]] else { return }
            let status = statuses.of(instance.plugin)
            guard old.tree[instance.id] != instance || old.statuses[instance.plugin] != status else { return }
            try op("replace", "/instances/\(index)") { $0.writeRawBytes(try Self.encoded(instance, status)) }
        }
        for index in 0..<prefix { try replaceIfChanged(index) }
        for _ in prefix..<(before.count - suffix) { remove("/instances/\(prefix)") }
        for index in prefix..<(after.count - suffix) {
            guard let instance = tree[after[index]] else { continue }
            try op("add", "/instances/\(index)") {
                $0.writeRawBytes(try Self.encoded(instance, statuses.of(instance.plugin)))
            }
        }
        for index in (after.count - suffix)..<after.count { try replaceIfChanged(index) }
        guard count > 0 else { return nil }
        return delta(base: old.revision, revision: tree.revision, ops: ops.bytes)
    }

    /// `{revision, base, patch}` around the encoded operations, as the next generation.
    private func delta(base: UInt64, revision: UInt64, ops: [UInt8]) -> Delta {
        var params = JSONWriter(capacity: ops.count + 64)
        params.writeRaw("{\"revision\":")
        params.writeInteger(Int64(bitPattern: revision))
        params.writeRaw(",\"base\":")
        params.writeInteger(Int64(bitPattern: base))
        params.writeRaw(",\"patch\":[")
        params.writeRawBytes(ops)
        params.writeRaw("]}")
        generation += 1
        return Delta(
            baseGeneration: generation - 1, generation: generation, base: base, revision: revision, params: params.bytes
        )
    }

    /// The patch of a commit that moved no instance: the touched instances replaced where they are. Nil when that
    /// does not hold (an instance came or went, a plugin's availability changed, the published tree is not the
    /// commit's base); then the tree is walked.
    private func patchInPlace(
        to tree: NavigationTree, epoch: Int, touched: Set<InstanceID>, _ statuses: inout StatusMemo
    ) throws -> Delta? {
        // Read through `published` in place (no copy of it held), so it can be updated without a copy below.
        guard let base = published?.revision, base &+ 1 == tree.revision, published?.root == tree.rootID,
            let known = published?.statuses, statuses.agree(with: known)
        else { return nil }
        var replaced: [(position: Int, instance: Instance)] = []
        for id in touched {
            let now = tree[id]
            guard let position = published?.positions[id] else {
                if now == nil { continue }  // created and dropped by the chain
                return nil  // a new instance
            }
            guard let now, let before = published?.tree[id] else { return nil }  // removed
            guard before.children == now.children, known[now.plugin] != nil else { return nil }
            if before != now { replaced.append((position, now)) }
        }
        replaced.sort { $0.position < $1.position }
        var ops = JSONWriter(capacity: 256)
        ops.writeRaw("{\"op\":\"replace\",\"path\":\"/revision\",\"value\":")
        ops.writeInteger(Int64(bitPattern: tree.revision))
        ops.append(UInt8(ascii: "}"))
        for (position, instance) in replaced {
            ops.writeRaw(",{\"op\":\"replace\",\"path\":\"/instances/\(position)\",\"value\":")
            ops.writeRawBytes(try Self.encoded(instance, statuses.of(instance.plugin)))
            ops.append(UInt8(ascii: "}"))
        }
        published?.tree = tree
        published?.revision = tree.revision
        published?.epoch = epoch
        if let ids = published?.ids { walk = Walk(epoch: epoch, ids: ids) }  // the same order: nothing moved
        return delta(base: base, revision: tree.revision, ops: ops.bytes)
    }

    /// The published snapshot, encoded (for a watcher that missed patches), with its revision.
    func publishedSnapshot() throws -> (revision: UInt64, bytes: [UInt8])? {
        guard let published else { return nil }
        var statuses = StatusMemo { _ in (.ok, nil) }
        statuses.known = published.statuses
        if let last, last.epoch == published.epoch, statuses.agree(with: last.statuses) {
            return (published.revision, last.bytes)
        }
        let bytes = try encode(published.tree, epoch: published.epoch, ids: published.ids, statuses: &statuses)
        return (published.revision, bytes)
    }

    // MARK: - Encoding

    /// The whole snapshot, each instance copied from the last one when neither it nor its plugin's availability
    /// changed since; it becomes the last one.
    private func encode(
        _ tree: NavigationTree, epoch: Int, ids: [InstanceID], statuses: inout StatusMemo
    ) throws -> [UInt8] {
        let previous = last
        last = nil  // its bytes are dropped as soon as the new snapshot is written, not kept beside it
        // About the last snapshot's size (or ~320 bytes an instance): room it does not fill is never touched.
        var writer = JSONWriter(capacity: (previous?.bytes.count ?? 320 * ids.count) + 4096)
        writer.writeRaw("{\"revision\":")
        writer.writeInteger(Int64(bitPattern: tree.revision))
        if let root = tree.rootID {
            writer.writeRaw(",\"root\":")
            writer.writeInteger(root.rawValue)
        }
        writer.writeRaw(",\"instances\":[")
        var slots: [Slot] = []
        slots.reserveCapacity(ids.count)
        var reuse = previous.map { Reuse($0) }
        for id in ids {
            guard let instance = tree[id] else { continue }  // the walk is of this tree
            if !slots.isEmpty { writer.append(UInt8(ascii: ",")) }
            let status = statuses.of(instance.plugin)
            let start = writer.bytes.count
            if let previous, let range = reuse?.range(of: instance, status, at: slots.count) {
                writer.writeRawBytes(previous.bytes[range])
            } else {
                writer.writeRawBytes(try Self.encoded(instance, status))
            }
            slots.append(
                Slot(
                    id: id, version: instance.version, start: UInt32(truncatingIfNeeded: start),
                    count: UInt32(truncatingIfNeeded: writer.bytes.count - start)))
        }
        writer.writeRaw("]}")
        // Offsets are 32-bit: a snapshot over 4 GiB (never within the protocol's limits) is encoded but not kept.
        if writer.bytes.count <= Int(UInt32.max) {
            last = Encoded(
                epoch: epoch, revision: tree.revision, bytes: writer.bytes, slots: slots, statuses: statuses.known)
        }
        return writer.bytes
    }

    /// Finds an instance's JSON in the previous snapshot: at the same index while the order is unchanged, else
    /// through an index by id built the first time it is needed.
    private struct Reuse {
        let previous: Encoded
        var byID: [InstanceID: Int]?
        /// Where the previous snapshot's index is ahead of (or behind) the new one, after a run came or went.
        var shift = 0

        init(_ previous: Encoded) { self.previous = previous }

        mutating func range(of instance: Instance, _ status: Status, at index: Int) -> Range<Int>? {
            // Changed since (or new): every instance it holds has a version at most its revision.
            guard instance.version <= previous.revision, previous.statuses[instance.plugin] == status else {
                return nil
            }
            let slots = previous.slots
            var position = index + shift
            if !(slots.indices.contains(position) && slots[position].id == instance.id) {
                if byID == nil {
                    var table: [InstanceID: Int] = [:]
                    table.reserveCapacity(slots.count)
                    for (position, slot) in slots.enumerated() { table[slot.id] = position }
                    byID = table
                }
                guard let found = byID?[instance.id] else { return nil }
                position = found
                shift = found - index
            }
            let slot = slots[position]
            guard slot.version == instance.version else { return nil }
            return Int(slot.start)..<(Int(slot.start) + Int(slot.count))
        }
    }

    /// One instance's JSON.
    private static func encoded(_ instance: Instance, _ status: Status) throws -> [UInt8] {
        try JSONValueEncoder().encodeBytes(instance.snapshot { _ in (status.status, status.reason) })
    }

    /// Availability asked once per plugin, not once per instance.
    private struct StatusMemo {
        let availability: NavigationTree.Availability
        var known: [String: Status] = [:]

        init(_ availability: @escaping NavigationTree.Availability) { self.availability = availability }

        mutating func of(_ plugin: String) -> Status {
            if let status = known[plugin] { return status }
            let (status, reason) = availability(plugin)
            let result = Status(status: status, reason: reason)
            known[plugin] = result
            return result
        }

        /// Whether every plugin in `statuses` has the same availability now.
        mutating func agree(with statuses: [String: Status]) -> Bool {
            for (plugin, status) in statuses where of(plugin) != status { return false }
            return true
        }
    }
}

extension Navigator {
    /// The current snapshot, encoded (what `tree/get` answers over the socket).
    func encodedSnapshot() throws(ResponseError) -> [UInt8] {
        do { return try snapshotEncoder.snapshot(of: tree, epoch: treeEpoch, availability: availability) } catch {
            throw ResponseError.wrapping(error)
        }
    }

    /// Publishes the current tree for watchers with deltas (one that subscribes now holds it); returns its
    /// generation.
    func publishSnapshot() throws(ResponseError) -> Int {
        do { _ = try snapshotEncoder.publish(tree, epoch: treeEpoch, availability: availability) } catch {
            throw ResponseError.wrapping(error)
        }
        return snapshotEncoder.generation
    }
}
