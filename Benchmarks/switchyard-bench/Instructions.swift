import Glibc
import Logging
import SwitchyardHost
import SwitchyardProtocol
import SwitchyardSystem

// Instructions per message, counted by callgrind: the same on a loaded machine as on an idle one, so the figure the
// software-cost targets are judged on where timings are too noisy. Each subject runs twice, with a small and a large
// number of sequential requests, and the difference of the two totals divided by the difference of the counts is the
// cost of one message: start-up, handshake and shutdown cancel out.
//
// Two things stop valgrind 3.19 (Debian 12) on these binaries, and both are worked around here rather than avoided:
// - Its DWARF reader gives up on the DWARF 5 units clang 21 emits for C code (the C floors, and the C shims' inline
//   functions clang compiles into Swift binaries; swiftc's own units are DWARF 4): "unhandled dwarf2 abbrev form code 0x25" (DW_FORM_strx1),
//   then "Possibly corrupted debuginfo file ... Giving up". The bench measures copies with the debug info stripped
//   (`objcopy --strip-debug`; the symbol table stays, so `callgrind_annotate` still names functions).
// - libdispatch parks its main thread in `sigsuspend` on a `static const sigset_t` (`_dispatch_sigsuspend`, in
//   .rodata), and valgrind's rt_sigsuspend wrapper writes into the caller's mask to keep its own signal deliverable:
//   a write to a read-only page, "VALGRIND INTERNAL ERROR: Valgrind received a signal 11" whatever `--smc-check` or
//   `--fair-sched` say (and a static build links the same libdispatch). `Benchmarks/callgrind/sigsuspend-shim.c`, preloaded, copies the
//   mask to the stack first.

extension Bench {
    /// The request lines a host sends one plugin: the handshake, then `count` requests of `method` (sequential ids).
    static func pluginInput(method: String, params: JSONValue, count: Int) -> [UInt8] {
        let limits: JSONValue = [
            "maxLineBytes": 1_048_576, "maxMessagesPerSecond": 1_000_000, "maxOutstandingRequests": 64,
            "maxInstances": 10_000,
            "maxStderrBytesPerSecond": 65_536, "requestTimeoutMs": 600_000, "heartbeatIntervalMs": 600_000,
            "heartbeatTimeoutMs": 600_000, "maxProtocolErrors": 20,
        ]
        let initialize: JSONValue = [
            "protocolVersions": [1], "host": ["name": "switchyard", "version": "bench"], "pluginName": "bench",
            "limits": limits,
        ]
        var bytes = Message.request(id: .number(1), method: "initialize", params: initialize).encodedLine()
        bytes += Message.notification(method: "initialized", params: nil).encodedLine()
        bytes += Message.request(
            id: .number(2), method: "coordinator/create", params: ["instance": 1, "type": "bench", "reason": "new"]
        ).encodedLine()
        for id in 0..<count {
            bytes += Message.request(id: .number(Int64(id + 3)), method: method, params: params).encodedLine()
        }
        return bytes
    }

    func instructions() async throws -> [Row] {
        let section = "Instructions per message (callgrind: counted, not timed; the same on a loaded machine)"
        StandardError.write("\(section)…\n")
        let path = SystemProcess.environmentValue("PATH")
        guard let valgrind = FileSystem.findExecutable("valgrind", path: path),
            FileSystem.findExecutable("objcopy", path: path) != nil, FileSystem.findExecutable("cc", path: path) != nil
        else {
            StandardError.write("  needs valgrind, objcopy and cc (apt-get install valgrind binutils gcc): skipped\n")
            return []
        }
        let folder = "/tmp/switchyard-bench-callgrind-\(getpid())"
        _ = try? SystemProcess.run(["rm", "-rf", folder])
        try FileSystem.makeDirectory(folder)
        defer { _ = try? SystemProcess.run(["rm", "-rf", folder]) }
        let shim = "\(folder)/sigsuspend-shim.so"
        let compiled = try SystemProcess.run([
            "cc", "-O2", "-shared", "-fPIC", "-o", shim, "\(directory)/Benchmarks/callgrind/sigsuspend-shim.c",
        ])
        guard compiled.status == 0 else { throw BenchFailure("cannot build the sigsuspend shim: \(compiled.text)") }
        func stripped(_ product: String) throws -> String {
            let copy = "\(folder)/\(product)"
            let result = try SystemProcess.run(["objcopy", "--strip-debug", "\(products)/\(product)", copy])
            guard result.status == 0 else { throw BenchFailure("objcopy \(product): \(result.text)") }
            return copy
        }
        /// Total instructions of `command`, its stdin read from `input` (nil: none).
        func count(_ command: [String], input: [UInt8]?) throws -> Double {
            let inputPath = "\(folder)/input"
            try FileSystem.writeFileAtomically(inputPath, input ?? [], mode: 0o644)
            let traced =
                [
                    "env", "LD_PRELOAD=\(shim)", "SWITCHYARD_PRODUCTS_DIR=\(products)", valgrind, "--tool=callgrind",
                    "--callgrind-out-file=\(folder)/callgrind.out",
                ] + command
            // Through sh only for the redirections; the arguments are passed as "$@", never parsed by the shell.
            let result = try SystemProcess.run(
                ["/bin/sh", "-c", "exec \"$@\" < \"$0\" > /dev/null", inputPath] + traced,
                timeoutMilliseconds: 1_200_000)
            guard result.status == 0,
                let line = result.text.split(separator: "\n").last(where: { $0.contains("Collected :") }),
                let total = Double(line.split(separator: " ").last ?? "")
            else {
                throw BenchFailure(
                    "callgrind failed (\(result.status)): \(traced.joined(separator: " "))\n\(result.text.suffix(1_500))"
                )
            }
            return total
        }
        /// Instructions per message: the difference of two runs over the difference of their message counts.
        func perMessage(_ small: Int, _ large: Int, _ run: (Int) throws -> Double) throws -> Double {
            let low = try run(small), high = try run(large)
            return (high - low) / Double(large - small)
        }
        let sdk = try stripped("BenchPlugin"), cPlugin = try stripped("switchyard-c-plugin")
        let cHost = try stripped("switchyard-c-host"), bench = try stripped("switchyard-bench")
        let (few, many) = options.quick ? (20, 120) : (1_000, 5_000)
        func plugin(_ binary: String, _ method: String, _ params: JSONValue) throws -> Double {
            try perMessage(few, many) {
                try count([binary], input: Self.pluginInput(method: method, params: params, count: $0))
            }
        }
        StandardError.write("  the plugins (\(few) and \(many) requests)…\n")
        let sdkPing = try plugin(sdk, PingRequest.method, [:])
        let sdkRoute = try plugin(sdk, CoordinatorRouteRequest.method, Self.routeParams)
        let cPing = try plugin(cPlugin, PingRequest.method, [:])
        let cRoute = try plugin(cPlugin, CoordinatorRouteRequest.method, Self.routeParams)
        // The host: this bench's own in-process host (`--host-messages`), its plugin not traced.
        let (hostFew, hostMany) = options.quick ? (20, 120) : (300, 1_300)
        StandardError.write("  the hosts (\(hostFew) and \(hostMany) requests)…\n")
        func host(_ method: String, _ product: String) throws -> Double {
            try perMessage(hostFew, hostMany) {
                try count([bench, "--host-messages", method, product, String($0)], input: nil)
            }
        }
        let hostPing = try host(PingRequest.method, "switchyard-c-plugin")
        let hostRoute = try host(CoordinatorRouteRequest.method, "BenchPlugin")
        let cHostPing = try perMessage(hostFew, hostMany) {
            try count([cHost, "\(products)/switchyard-c-plugin", String($0)], input: nil)
        }
        // A restored instance and a deep link cost far more per message: fewer of them give the same precision.
        StandardError.write("  a restored instance, a deep link…\n")
        let (restoreFew, restoreMany) = options.quick ? (20, 120) : (500, 2_500)
        let sdkRestore = try perMessage(restoreFew, restoreMany) {
            try count([sdk], input: Self.restoreInput(count: $0))
        }
        let cRestore = try perMessage(restoreFew, restoreMany) {
            try count([cPlugin], input: Self.restoreInput(count: $0))
        }
        let (linkFew, linkMany) = options.quick ? (5, 25) : (50, 250)
        let hostLink = try perMessage(linkFew, linkMany) {
            try count([bench, "--host-messages", OpenRequest.method, "BenchPlugin", String($0)], input: nil)
        }
        // The issue's targets (#29), in instructions: absolute, as callgrind counts hold on any machine.
        func row(_ measure: String, _ value: Double, _ floor: Double, _ floorName: String, target: Double) -> Row {
            var row = Row(
                section: section, measure: measure, unit: "instr", switchyard: value, floor: floor,
                floorName: floorName, target: "≤ \(Int(target / 1_000))k")
            row.met = value <= target
            return row
        }
        return [
            row(
                "host: a `$/ping` round trip (Switchyard host ↔ C plugin)", hostPing, cHostPing,
                "C libuv host ↔ C plugin", target: 6_000),
            row(
                "host: a `coordinator/route` round trip (↔ Swift plugin)", hostRoute, cHostPing, "C libuv host, a ping",
                target: 10_000),
            row(
                "host: a deep link across four plugins (`open` \(Self.deepLink), then `popToRoot`), in-process",
                hostLink, 7 * cHostPing, "7 C libuv host round trips", target: 250_000),
            row("Swift SDK: a `$/ping` answered", sdkPing, cPing, "C plugin", target: 2_000),
            row("Swift SDK: a `coordinator/route` answered", sdkRoute, cRoute, "C plugin, `{}`", target: 6_000),
            row(
                "Swift SDK: a restored instance (`coordinator/create`, reason restore: a root, a pushed screen, state)",
                sdkRestore, cRestore, "C plugin, `{}`", target: 20_000),
        ]
    }
}

extension Bench {
    /// The lines a host sends a restarted plugin to restore `count` instances: the handshake, then one
    /// `coordinator/create` with reason `restore` per instance, each a stack with its root and one pushed screen and
    /// the coordinator's state, as the host sends them after a crash (§16).
    static func restoreInput(count: Int) -> [UInt8] {
        var bytes = pluginInput(method: PingRequest.method, params: [:], count: 0)
        for index in 0..<count {
            let instance = JSONValue.int(Int64(index + 2))
            let restore: JSONValue = [
                "id": instance, "plugin": "bench", "type": "bench", "kind": "stack", "state": ["opened": 1],
                "status": "ready",
                "root": ["entry": 1, "route": "home", "transition": "root", "content": ["screen": ["name": "Home"]]],
                "entries": [
                    [
                        "entry": 2, "route": "item", "transition": "push", "params": ["id": "42"],
                        "content": ["screen": ["name": "Item", "props": ["id": "42"]]],
                    ]
                ],
            ]
            let params: JSONValue = [
                "instance": instance, "type": "bench", "reason": "restore", "state": ["opened": 1],
                "restore": restore,
            ]
            bytes += Message.request(
                id: .number(Int64(index + 3)), method: CoordinatorCreateRequest.method, params: params
            ).encodedLine()
        }
        return bytes
    }

    /// The link the deep-link rows open: three `remote` hops through the chain of four plugins, then a screen.
    static let deepLink = "switchyard://remote/remote/remote/item/7"
}

/// `switchyard-bench --host-messages METHOD PRODUCT COUNT`: a host with one plugin answers COUNT sequential requests,
/// then stops; what callgrind counts for the host's side.
@MainActor
func hostMessages(_ arguments: [String], logger: Logger) async throws {
    guard arguments.count == 3, let count = Int(arguments[2]) else {
        throw BenchFailure("usage: --host-messages METHOD PRODUCT COUNT")
    }
    if arguments[0] == OpenRequest.method {
        // A deep link across the chain of four plugins, then back to the root (so each link builds the same chain).
        var manifest = Bench.chain(4, root: "bench")
        manifest.directory = FileSystem.currentDirectory
        let host = try await HostHandle.start(
            manifest: manifest, options: HostOptions(productsDirectory: defaultProductsDirectory()), logger: logger)
        for _ in 0..<count {
            _ = try await host.open(Bench.deepLink)
            _ = try await host.navigate([.popToRoot])
        }
        await host.shutdown()
        return
    }
    // The C plugin declares no "bench" type: no root, a ping needs no instance.
    let root = arguments[1] == "BenchPlugin" ? Bench.benchRoot : nil
    let manifest = Manifest(
        app: "bench", root: root, plugins: [PluginManifest(name: "bench", product: arguments[1])],
        directory: FileSystem.currentDirectory)
    let host = try await HostHandle.start(
        manifest: manifest, options: HostOptions(productsDirectory: defaultProductsDirectory()), logger: logger)
    if arguments[0] == CoordinatorRouteRequest.method {
        // As a chain sends and reads it (the navigator's byte writer and typed reader), not from a `JSONValue`.
        _ = try await host.routeSeries("bench", Bench.routeRequest, count: count)
    } else {
        _ = try await host.requestSeries("bench", method: arguments[0], params: [:], count: count)
    }
    await host.shutdown()
}
