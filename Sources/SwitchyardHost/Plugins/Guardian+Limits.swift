import SwitchyardSystem

// Resource limits for fault experiments (`plugin/limits`, spec §22.5): where plugins are contained by a cgroup v2, a
// limited plugin gets a cgroup of its own below the plugins' one, in which the kernel enforces `memory.max` (its OOM
// killer) and `cpu.max` (its scheduler). The guardian still kills the whole tree at the end (`cgroup.kill` is
// recursive) and removes the empty children before their parent.
extension Guardian {
    /// A cgroup of its own for plugin process `pid` with `controller` ("memory", "cpu") enabled, or nil where there
    /// is none to have: plugins are not contained by a cgroup, or the controller is not delegated to theirs.
    func limitGroup(for pid: Int32, controller: String) throws(SystemError) -> String? {
        guard mechanism == .cgroup, let cgroup,
            let available = try? FileSystem.readFile("\(cgroup)/cgroup.controllers"),
            String(decoding: available, as: UTF8.self).split(whereSeparator: \.isWhitespace).contains(
                Substring(controller))
        else { return nil }
        // cgroup v2 hands a controller to children only from a cgroup that holds no process itself: before the
        // first limit, every plugin moves to a `plugins` leaf, where the later ones are spawned.
        if plugins == cgroup {
            let leaf = "\(cgroup)/plugins"
            if !FileSystem.isDirectory(leaf) { try FileSystem.makeDirectory(leaf, mode: 0o755) }
            let members = (try? FileSystem.readFile("\(cgroup)/cgroup.procs")) ?? []
            for member in String(decoding: members, as: UTF8.self).split(separator: "\n") {
                try? FileSystem.writeExisting("\(leaf)/cgroup.procs", String(member))
            }
            plugins = leaf
        }
        try FileSystem.writeExisting("\(cgroup)/cgroup.subtree_control", "+\(controller)")
        let group = "\(cgroup)/limited-\(pid)"
        if !FileSystem.isDirectory(group) { try FileSystem.makeDirectory(group, mode: 0o755) }
        try FileSystem.writeExisting("\(group)/cgroup.procs", "\(pid)")
        return group
    }
}
