import SwitchyardNavigation
import SwitchyardProtocol

/// Encodes tree snapshots from a cache of each instance's encoded JSON, and the change from the last snapshot it
/// published to the next as a JSON Patch (RFC 6902) for the clients that subscribed with `deltas` (spec §15).
///
/// Why a cache: a snapshot of a 1,000-instance tree is ~1.4 MiB of JSON, and a change touches one or two instances.
/// Encoding an instance goes through `Encodable` (the snapshot structs are built, then written); copying its bytes
/// is a `memcpy`. An unchanged instance shares its storage with the copy kept beside its bytes, so telling that it
/// is unchanged (`==`) costs a few pointer comparisons, not a walk of its content.
///
/// Why patches per instance and not a generic JSON diff: the snapshot is a flat list of instances in a stable order
/// (depth-first from the root), and a change replaces a few of them and inserts or removes one contiguous run (the
/// subtree a push opened or a pop closed). Comparing the two id sequences from both ends and the instances in place
/// finds that in one pass, without building or walking the two documents.
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

    /// An instance's JSON and what it was encoded from: its ``Instance/version`` (every commit that changes an
    /// instance stamps it with the new revision; a tree read from a state file starts with the cache empty) and its
    /// plugin's availability. Not the instance itself: at 10,000 instances a copy of each would cost megabytes.
    private struct Cached {
        let version: UInt64
        let status: Status
        let bytes: [UInt8]
    }

    /// The snapshot the last patch led to: the base of the next one.
    private struct Published {
        var revision: UInt64
        var root: InstanceID?
        var ordered: [Instance]
        var positions: [InstanceID: Int]
        var statuses: [String: Status]
    }

    /// The last walk of the tree in snapshot order, and which tree it walked (``Navigator/treeEpoch``).
    private struct Walk {
        let epoch: Int
        let ordered: [Instance]
        let positions: [InstanceID: Int]
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

    private var cache: [InstanceID: Cached] = [:]
    private var published: Published?
    private var walk: Walk?
    /// Bumped each time the published snapshot changes: a watcher holds generation N or must get a full snapshot.
    private(set) var generation = 0

    /// The snapshot of `tree` (as `schema/tree.json`), encoded.
    func snapshot(of tree: NavigationTree, epoch: Int, availability: @escaping NavigationTree.Availability) throws -> [UInt8] {
        var statuses = StatusMemo(availability)
        return try encode(revision: tree.revision, root: tree.rootID, ordered: order(of: tree, epoch: epoch).ordered, statuses: &statuses)
    }

    /// The tree's instances in snapshot order, walked once per version of the tree.
    private func order(of tree: NavigationTree, epoch: Int) -> Walk {
        if let walk, walk.epoch == epoch { return walk }
        let ordered = tree.orderedInstances
        var positions: [InstanceID: Int] = [:]
        positions.reserveCapacity(ordered.count)
        for (index, instance) in ordered.enumerated() { positions[instance.id] = index }
        let result = Walk(epoch: epoch, ordered: ordered, positions: positions)
        walk = result
        return result
    }

    /// Makes `tree` the published snapshot and returns the patch from the previous one (nil when there was none, or
    /// when nothing changed: then the generation stays, and watchers holding it stay in step).
    ///
    /// `touched` (from the commit that made `tree`, one revision after the published one): when it changed no
    /// instance's place (no instance came or went), the patch replaces those instances in place, without walking the
    /// tree: a change to one entry costs the same in a tree of 20 instances and of 10,000.
    func publish(
        _ tree: NavigationTree, epoch: Int, touched: Set<InstanceID>? = nil, availability: @escaping NavigationTree.Availability
    ) throws -> Delta? {
        var statuses = StatusMemo(availability)
        if let touched, let delta = try patchInPlace(to: tree, epoch: epoch, touched: touched, &statuses) { return delta }
        let walked = order(of: tree, epoch: epoch)
        let ordered = walked.ordered
        guard let old = published else {
            for instance in ordered { _ = statuses.of(instance.plugin) }
            published = Published(revision: tree.revision, root: tree.rootID, ordered: ordered, positions: walked.positions, statuses: statuses.known)
            generation += 1
            return nil
        }
        do {
            let delta = try patch(from: old, to: tree, ordered, &statuses)
            published = Published(revision: tree.revision, root: tree.rootID, ordered: ordered, positions: walked.positions, statuses: statuses.known)
            return delta
        } catch {
            // What the watchers hold is no longer known: each gets a full snapshot next.
            published = nil
            generation += 1
            throw error
        }
    }

    private func patch(from old: Published, to tree: NavigationTree, _ ordered: [Instance], _ statuses: inout StatusMemo) throws -> Delta? {
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
        if old.revision != tree.revision { op("replace", "/revision") { $0.writeInteger(Int64(bitPattern: tree.revision)) } }
        if old.root != tree.rootID {
            if let root = tree.rootID {
                op(old.root == nil ? "add" : "replace", "/root") { $0.writeInteger(root.rawValue) }
            } else {
                remove("/root")
            }
        }
        // The run that differs: what lies between the longest common prefix and suffix of the two id sequences.
        let before = old.ordered, after = ordered
        var prefix = 0
        while prefix < before.count, prefix < after.count, before[prefix].id == after[prefix].id { prefix += 1 }
        var suffix = 0
        while suffix < before.count - prefix, suffix < after.count - prefix,
            before[before.count - 1 - suffix].id == after[after.count - 1 - suffix].id
        {
            suffix += 1
        }
        // Applied in order: replacements in the prefix (same index before and after), the run removed and the new
        // one added at its place, then replacements in the suffix at their new indices.
        func replaceIfChanged(_ index: Int, _ beforeIndex: Int) throws {
            let instance = after[index]
            let status = statuses.of(instance.plugin)
            guard before[beforeIndex] != instance || old.statuses[instance.plugin] != status else { return }
            try op("replace", "/instances/\(index)") { $0.writeRawBytes(try encoded(instance, status)) }
        }
        for index in 0..<prefix { try replaceIfChanged(index, index) }
        for _ in prefix..<(before.count - suffix) { remove("/instances/\(prefix)") }
        for index in prefix..<(after.count - suffix) {
            let instance = after[index]
            try op("add", "/instances/\(index)") { $0.writeRawBytes(try encoded(instance, statuses.of(instance.plugin))) }
        }
        for offset in 0..<suffix { try replaceIfChanged(after.count - suffix + offset, before.count - suffix + offset) }
        guard count > 0 else { return nil }
        evictIfStale(live: after)
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
        return Delta(baseGeneration: generation - 1, generation: generation, base: base, revision: revision, params: params.bytes)
    }

    /// The patch of a commit that moved no instance: the touched instances replaced where they are. Nil when that
    /// does not hold (an instance came or went, a plugin's availability changed, the published tree is not the
    /// commit's base); then the tree is walked.
    private func patchInPlace(to tree: NavigationTree, epoch: Int, touched: Set<InstanceID>, _ statuses: inout StatusMemo) throws -> Delta? {
        // Read through `published` in place (no copy of it held), so its list can be updated without a copy below.
        guard let base = published?.revision, base &+ 1 == tree.revision, published?.root == tree.rootID,
            let known = published?.statuses
        else { return nil }
        for (plugin, status) in known where statuses.of(plugin) != status { return nil }
        var replaced: [(position: Int, instance: Instance)] = []
        for id in touched {
            let now = tree[id]
            guard let position = published?.positions[id] else {
                if now == nil { continue }  // created and dropped by the chain
                return nil  // a new instance
            }
            guard let now, let before = published?.ordered[position] else { return nil }  // removed
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
            ops.writeRawBytes(try encoded(instance, statuses.of(instance.plugin)))
            ops.append(UInt8(ascii: "}"))
        }
        // In place: the published list is the only holder of its storage once the walk lets go of it.
        walk = nil
        guard var current = published.take() else { return nil }
        for (position, instance) in replaced { current.ordered[position] = instance }
        current.revision = tree.revision
        published = current
        walk = Walk(epoch: epoch, ordered: current.ordered, positions: current.positions)
        return delta(base: base, revision: tree.revision, ops: ops.bytes)
    }

    /// The published snapshot, encoded (for a watcher that missed patches), with its revision.
    func publishedSnapshot() throws -> (revision: UInt64, bytes: [UInt8])? {
        guard let published else { return nil }
        var statuses = StatusMemo { _ in (.ok, nil) }
        statuses.known = published.statuses
        let bytes = try encode(revision: published.revision, root: published.root, ordered: published.ordered, statuses: &statuses)
        return (published.revision, bytes)
    }

    // MARK: - Encoding

    private func encode(revision: UInt64, root: InstanceID?, ordered: [Instance], statuses: inout StatusMemo) throws -> [UInt8] {
        var parts: [[UInt8]] = []
        parts.reserveCapacity(ordered.count)
        var size = 64
        for instance in ordered {
            let bytes = try encoded(instance, statuses.of(instance.plugin))
            size += bytes.count + 1
            parts.append(bytes)
        }
        var writer = JSONWriter(capacity: size)
        writer.writeRaw("{\"revision\":")
        writer.writeInteger(Int64(bitPattern: revision))
        if let root {
            writer.writeRaw(",\"root\":")
            writer.writeInteger(root.rawValue)
        }
        writer.writeRaw(",\"instances\":[")
        for (index, part) in parts.enumerated() {
            if index > 0 { writer.append(UInt8(ascii: ",")) }
            writer.writeRawBytes(part)
        }
        writer.writeRaw("]}")
        evictIfStale(live: ordered)
        return writer.bytes
    }

    /// The instance's JSON, from the cache when neither it nor its plugin's availability changed.
    private func encoded(_ instance: Instance, _ status: Status) throws -> [UInt8] {
        if let cached = cache[instance.id], cached.version == instance.version, cached.status == status { return cached.bytes }
        let encoded = try JSONValueEncoder().encodeBytes(instance.snapshot { _ in (status.status, status.reason) })
        // Kept at its size: the encoder's buffer grows by doubling, and the cache holds one per instance.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        bytes.append(contentsOf: encoded)
        cache[instance.id] = Cached(version: instance.version, status: status, bytes: bytes)
        return bytes
    }

    /// Drops the bytes of instances that left the tree, once they could outnumber the live ones (amortized O(1)).
    private func evictIfStale(live: [Instance]) {
        guard cache.count > 2 * live.count + 64 else { return }
        let keep = Set(live.map(\.id))
        cache = cache.filter { keep.contains($0.key) }
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
    }
}

extension Navigator {
    /// The current snapshot, encoded (what `tree/get` answers over the socket).
    func encodedSnapshot() throws(ResponseError) -> [UInt8] {
        do { return try snapshotEncoder.snapshot(of: tree, epoch: treeEpoch, availability: availability) } catch { throw ResponseError.wrapping(error) }
    }

    /// Publishes the current tree for watchers with deltas (one that subscribes now holds it); returns its
    /// generation.
    func publishSnapshot() throws(ResponseError) -> Int {
        do { _ = try snapshotEncoder.publish(tree, epoch: treeEpoch, availability: availability) } catch { throw ResponseError.wrapping(error) }
        return snapshotEncoder.generation
    }
}
