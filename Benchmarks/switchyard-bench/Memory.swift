import SwitchyardProtocol
import SwitchyardSystem

extension Bench {
    /// Host RSS for a large app: 100 plugins, each owning 100 instances (10,000 in all), with a snapshot taken (the
    /// per-instance JSON cache filled) and a watcher with deltas subscribed.
    func memory() async throws -> [Row] {
        let section = "Memory: 100 plugins, 10,000 instances"
        StandardError.write("\(section)…\n")
        let plugins = options.quick ? 5 : 100
        let server = try await Server(manifest: Self.chain(plugins, root: "bench"), products: products, name: "memory")
        defer { server.stop() }
        let tree = try build(server, plugins: plugins, subs: 99, items: 0)
        let watcher = try UnixSocket(connectingTo: server.socket)
        defer { watcher.close() }
        try watcher.write(
            Message.request(id: .number(1), method: TreeSubscribeRequest.method, params: ["deltas": true]).encodedLine()
        )
        while true {  // the subscription's answer: the whole snapshot
            let chunk = try watcher.read(timeoutMilliseconds: 60_000)
            if chunk.isEmpty { throw BenchFailure("the host closed the socket") }
            if chunk.last == 0x0A { break }
        }
        let small = try await Server(manifest: Self.chain(1, root: "bench"), products: products, name: "memory-small")
        defer { small.stop() }
        _ = try build(small, plugins: 1, subs: 19, items: 0)
        StandardError.write("  built \(tree.instances.count) instances on \(plugins) plugins\n")
        var row = Row(
            section: section,
            measure:
                "host RSS (`switchyard run`, \(plugins) plugins, \(tree.instances.count) instances, a snapshot taken, a delta watcher)",
            unit: "MiB", switchyard: Double(server.residentBytes) / 1_048_576,
            floor: Double(small.residentBytes) / 1_048_576,
            floorName: "1 plugin, 20 instances", target: "≤ 32 MiB")
        row.met = row.switchyard <= 32
        return [row]
    }
}
