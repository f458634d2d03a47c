// misbehave: a coordinator plugin that breaks the rules on purpose, for fault-isolation tests and experiments.
//
// It speaks raw bytes (no SDK), so it can corrupt the stream in every way a real plugin might. Until a fault
// triggers it behaves as a well-formed plugin with one stack coordinator type, "lab".
//
//   --name NAME                  plugin name reported in initialize (default "misbehave")
//   --speaks V[,V]               protocol versions it speaks (default 1); none offered -> unsupported-version error
//   --answer-version V           answer initialize choosing version V regardless of the offer
//   --exit-in-handshake CODE     exit with CODE when initialize arrives, without answering
//   --hang-in-handshake          never answer initialize (keep reading)
//   --hold-handshake-until FILE  answer initialize only once FILE exists (a plugin held in `starting` until a test
//                                lets it go; with --faulty-runs, only in those runs)
//   --crash-after N              abort() when message N arrives (SIGABRT)
//   --exit-after N               exit when message N arrives, with --exit-status (default 3)
//   --hang-after N               from message N on, read but never answer
//   --garbage-after N            from message N on, answer each message with a garbage line first
//   --oversize-after N           at message N, write one line of --oversize-bytes (default 4 MiB)
//   --flood-after N              at message N, write --flood-lines (default 1e6) valid notifications
//   --flood-stderr               after the handshake, write stderr without pause
//   --print-after N              at message N, print non-JSON text to stdout (what an unprotected print does)
//   --stop-reading-after N       at message N, stop reading stdin forever (without exiting)
//   --ignore-sigterm             ignore SIGTERM (the shutdown ladder must escalate to SIGKILL)
//   --ignore-eof                 keep running after stdin EOF (the guardian must clean up)
//   --delay-ms MS                answer every request after MS milliseconds
//   --say TEXT                   write TEXT as one stderr line at start (repeatable)
//   --route-table JSON           declare this coordinator list instead of the "lab" type (composition tests); every
//                                create is still answered with the root "bench" and every route with a screen
//   --play-table                 answer as the declared table says instead: a stack its initialRoute, a tabs
//                                coordinator every tab, a route with a target that coordinator, else a screen
//   --navigate-on-ping JSON      when the host pings, send `navigate` with these params and report the answer on
//                                stderr ("misbehave: navigate answered …"): a plugin reaching for others' instances
//   --faulty-runs N[,N]          faults only in these runs: 0 is the first process, 1 the first restart... (the
//                                host says which in initialize's `restarts`); default: every run
//   --trigger-route ROUTE        the *-after faults fire when `coordinator/route` for ROUTE arrives (whatever N
//                                says), and --garbage-after from then on: a fault a test can time exactly
//   --fuzz-lines N               after the handshake, write N mutated protocol lines (seeded by --fuzz-seed)
//   --type NAME                  the "lab" type's name (to stand in for another plugin's coordinator type)
//   --refuse ROUTE=CODE          answer `coordinator/route` for ROUTE with that error code (a guard's -32013, a
//                                bug's -32603...), as a plugin refusing it would (repeatable)
//
// Faults for the conformance checker (`switchyard check-plugin`), each breaking one rule of Protocol/README.md:
//   --slow-route ROUTE:MS        answer `coordinator/route` for ROUTE after MS ms, blocking the reader (§3.4: pings
//                                then wait behind it)
//   --wrong-content ROUTE        answer ROUTE with a coordinator although it declares no target (§8)
//   --answer-unknown-methods     answer unknown requests with {} instead of -32601 (§7)
//   --reject-unknown-members     refuse members the spec does not define, in the envelope and in params (§2)
//   --accept-wrong-types         take `sample` with an `id` that is not a string (§7; by default -32602 naming it)
//   --refuse-restore             answer `coordinator/create` with reason restore with an error (§16)
//   --exit-code N                exit with N on the exit notification, whether or not shutdown came first (§3.6)
//
//   --descendants KIND FILE      when initialize arrives (first run only), leave a descendant that ignores SIGTERM/SIGHUP and sleeps: `setsid` (in
//                                a session of its own, via setsid -f), `daemon` (double fork, orphaned in our group) or
//                                `both` (fork, setsid, fork: a classic daemon); its pid, as the host sees it, is
//                                appended to FILE once it runs (repeatable)
//   --descendants-at-eof         leave them at stdin EOF instead (when the host has gone), then exit
//
//   --flood-on-sigusr1           SIGUSR1 floods stdout with --flood-lines valid notifications (for `switchyard
//                                chaos`); off by default, since the signal thread costs descriptors of its own
//   --grow-on-sigusr2 MB         SIGUSR2 allocates MB MiB, one at a time, every page touched and kept (a leak that
//                                meets a memory limit: the kernel's OOM killer, or a failed allocation)
//
// Faults for fault experiments (`switchyard chaos`) and their tests:
//   --stderr-on-route ROUTE:BYTES[:LINE]  before answering ROUTE, write BYTES to stderr in lines of LINE bytes
//                                (default: one line), blocking until the host has taken them all
//   --answer-oversize ROUTE:BYTES  answer ROUTE with a result line of BYTES (a screen prop that long), `id` first
//   --wrong-answer-every N       answer the k-th `coordinator/route` of this process wrongly when k % N equals
//                                --wrong-answer-phase (default 0): its screen's `id` prop gets "-wrong" appended, a
//                                plausible answer the host cannot tell from a right one (a seeded defect)
//   --sample-actions             the "sample" route declares the action "close", answered with a pop of its entry
//   --allocate-on-route ROUTE:MB before answering ROUTE, allocate MB MiB, touch every page and free them (a memory
//                                limit makes the allocation fail, which crashes a Swift process)
//   --open-on-route ROUTE:N      before answering ROUTE, open N pipes and close them; when opening fails (a
//                                descriptor limit) answer ROUTE with -32603 naming the errno instead
import Dispatch
import Glibc
import SwitchyardSystem
import SwitchyardProtocol
import Synchronization

struct Options {
    var name = "misbehave"
    var speaks = [1]
    var answerVersion: Int?
    var exitInHandshake: Int32?
    var hangInHandshake = false
    var holdHandshakeUntil: String?
    var crashAfter: Int?
    var exitAfter: Int?
    var hangAfter: Int?
    var garbageAfter: Int?
    var oversizeAfter: Int?
    var oversizeBytes = 4 << 20
    var floodAfter: Int?
    var floodLines = 1_000_000
    var floodStderr = false
    var printAfter: Int?
    var stopReadingAfter: Int?
    var ignoreSIGTERM = false
    var ignoreEOF = false
    var delayMs = 0
    var say: [String] = []
    var navigateOnPing: String?
    var routeTable: String?
    var playTable = false
    var faultyRuns: Set<Int>?
    var typeName = "lab"
    var floodOnSignal = false
    var triggerRoute: String?
    var refusals: [String: Int] = [:]
    var exitStatus: Int32 = 3
    var fuzzLines = 0
    var fuzzSeed: UInt64 = 1
    var descendants: [(kind: String, file: String)] = []
    var descendantsAtEOF = false
    var slowRoute: (route: String, milliseconds: Int)?
    var wrongContent: String?
    var answerUnknownMethods = false
    var rejectUnknownMembers = false
    var acceptWrongTypes = false
    var refuseRestore = false
    var exitCode: Int32?
    var growOnSignal: Int?
    var stderrOnRoute: (route: String, bytes: Int, line: Int)?
    var answerOversize: (route: String, bytes: Int)?
    var wrongAnswerEvery: Int?
    var wrongAnswerPhase = 0
    var sampleActions = false
    var allocateOnRoute: (route: String, megabytes: Int)?
    var openOnRoute: (route: String, pipes: Int)?
}

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    func int(_ flag: String) -> Int {
        guard let text = arguments.next(), let value = Int(text) else {
            writeStderr("misbehave: \(flag) needs a number\n")
            exit(64)
        }
        return value
    }
    while let flag = arguments.next() {
        switch flag {
        case "--name": options.name = arguments.next() ?? options.name
        case "--speaks": options.speaks = (arguments.next() ?? "1").split(separator: ",").compactMap { Int($0) }
        case "--answer-version": options.answerVersion = int(flag)
        case "--exit-in-handshake": options.exitInHandshake = Int32(int(flag))
        case "--hang-in-handshake": options.hangInHandshake = true
        case "--hold-handshake-until": options.holdHandshakeUntil = arguments.next()
        case "--crash-after": options.crashAfter = int(flag)
        case "--exit-after": options.exitAfter = int(flag)
        case "--hang-after": options.hangAfter = int(flag)
        case "--garbage-after": options.garbageAfter = int(flag)
        case "--oversize-after": options.oversizeAfter = int(flag)
        case "--oversize-bytes": options.oversizeBytes = int(flag)
        case "--flood-after": options.floodAfter = int(flag)
        case "--flood-lines": options.floodLines = int(flag)
        case "--flood-stderr": options.floodStderr = true
        case "--print-after": options.printAfter = int(flag)
        case "--stop-reading-after": options.stopReadingAfter = int(flag)
        case "--ignore-sigterm": options.ignoreSIGTERM = true
        case "--ignore-eof": options.ignoreEOF = true
        case "--delay-ms": options.delayMs = int(flag)
        case "--say": options.say.append(arguments.next() ?? "")
        case "--navigate-on-ping": options.navigateOnPing = arguments.next()
        case "--route-table": options.routeTable = arguments.next()
        case "--play-table": options.playTable = true
        case "--faulty-runs":
            options.faultyRuns = Set((arguments.next() ?? "").split(separator: ",").compactMap { Int($0) })
        case "--type": options.typeName = arguments.next() ?? options.typeName
        case "--flood-on-sigusr1": options.floodOnSignal = true
        case "--trigger-route": options.triggerRoute = arguments.next()
        case "--refuse":
            let parts = (arguments.next() ?? "").split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let code = Int(parts[1]) else {
                writeStderr("misbehave: --refuse needs ROUTE=CODE\n")
                exit(64)
            }
            options.refusals[parts[0]] = code
        case "--exit-status": options.exitStatus = Int32(int(flag))
        case "--fuzz-lines": options.fuzzLines = int(flag)
        case "--fuzz-seed": options.fuzzSeed = UInt64(int(flag))
        case "--descendants": options.descendants.append((arguments.next() ?? "", arguments.next() ?? "/dev/null"))
        case "--descendants-at-eof": options.descendantsAtEOF = true
        case "--slow-route":
            let parts = (arguments.next() ?? "").split(separator: ":")
            if parts.count == 2, let milliseconds = Int(parts[1]) {
                options.slowRoute = (String(parts[0]), milliseconds)
            }
        case "--wrong-content": options.wrongContent = arguments.next()
        case "--answer-unknown-methods": options.answerUnknownMethods = true
        case "--reject-unknown-members": options.rejectUnknownMembers = true
        case "--accept-wrong-types": options.acceptWrongTypes = true
        case "--refuse-restore": options.refuseRestore = true
        case "--exit-code": options.exitCode = Int32(int(flag))
        case "--grow-on-sigusr2": options.growOnSignal = int(flag)
        case "--stderr-on-route":
            let parts = (arguments.next() ?? "").split(separator: ":").map(String.init)
            guard parts.count >= 2, let bytes = Int(parts[1]) else {
                writeStderr("misbehave: --stderr-on-route needs ROUTE:BYTES[:LINE]\n")
                exit(64)
            }
            options.stderrOnRoute = (parts[0], bytes, parts.count > 2 ? Int(parts[2]) ?? bytes : bytes)
        case "--answer-oversize":
            let parts = (arguments.next() ?? "").split(separator: ":").map(String.init)
            guard parts.count == 2, let bytes = Int(parts[1]) else {
                writeStderr("misbehave: --answer-oversize needs ROUTE:BYTES\n")
                exit(64)
            }
            options.answerOversize = (parts[0], bytes)
        case "--wrong-answer-every": options.wrongAnswerEvery = max(1, int(flag))
        case "--wrong-answer-phase": options.wrongAnswerPhase = int(flag)
        case "--sample-actions": options.sampleActions = true
        case "--allocate-on-route", "--open-on-route":
            let parts = (arguments.next() ?? "").split(separator: ":").map(String.init)
            guard parts.count == 2, let count = Int(parts[1]), count > 0 else {
                writeStderr("misbehave: \(flag) needs ROUTE:N\n")
                exit(64)
            }
            if flag == "--open-on-route" {
                options.openOnRoute = (parts[0], count)
            } else {
                options.allocateOnRoute = (parts[0], count)
            }
        default:
            writeStderr("misbehave: unknown flag \(flag)\n")
            exit(64)
        }
    }
    return options
}

func writeStderr(_ text: String) { StandardError.write(text) }
/// One writer at a time: the SIGUSR1 flood runs on another thread, and a line must never be split.
nonisolated let stdoutLock = NSLockLike()
nonisolated func writeStdout(_ bytes: [UInt8]) {
    stdoutLock.withLock {
        do { try Descriptor.writeAll(1, bytes) } catch { exit(0) }
    }
}

/// Serialises writes to stdout across threads (a semaphore, which needs no `@unchecked`).
nonisolated final class NSLockLike: Sendable {
    private let semaphore = DispatchSemaphore(value: 1)
    func withLock(_ body: () -> Void) {
        semaphore.wait()
        body()
        semaphore.signal()
    }
}
func send(_ message: Message) { writeStdout(message.encodedLine()) }

/// Opens `count` pipes and closes them again; the first failure, if any (with a descriptor limit: `EMFILE`).
func openPipes(_ count: Int) -> SystemError? {
    var opened: [Int32] = []
    defer { for descriptor in opened { Descriptor.close(descriptor) } }
    for _ in 0..<count {
        do throws(SystemError) {
            let pipe = try Descriptor.pipe()
            opened += [pipe.read, pipe.write]
        } catch { return error }
    }
    return nil
}

/// Leaves the descendants --descendants asks for, through sh (no fork in this threaded Swift process). Each reads
/// its own pid from /proc/self/stat (the host's /proc, so the host's pid even inside a PID namespace), prints it and
/// closes stdout: the command substitution returns once it runs, and the pid goes to the file only then.
func leaveDescendants() {
    for (kind, file) in options.descendants {
        let body = "trap '' TERM HUP; read p _ </proc/self/stat; echo \\$p; exec sleep 100000 >/dev/null"
        let launch: String
        switch kind {
        case "setsid": launch = "setsid -f sh -c \"\(body)\""
        case "daemon": launch = "(sh -c \"\(body)\" &)"
        default: launch = "(setsid sh -c \"\(body)\" &)"
        }
        let script = "exec </dev/null 2>/dev/null; p=$( \(launch) ); echo $p >>'\(file)'"
        _ = try? SystemProcess.run(["/bin/sh", "-c", script])
    }
}

let options = parseOptions()
if options.ignoreSIGTERM { signal(SIGTERM, SIG_IGN) }
for line in options.say { writeStderr(line + "\n") }

let sampleRoute: JSONValue = {
    var route: JSONObject = [
        "name": "sample", "transition": "push", "deepLink": "sample/:id", "params": [["name": "id", "type": "string"]],
    ]
    if options.sampleActions { route["actions"] = [["name": "close"]] }
    return .object(route)
}()

let defaultTable: JSONValue = [
    "type": .string(options.typeName), "kind": "stack", "initialRoute": "bench",
    "routes": [
        ["name": "bench", "transition": "root"],
        sampleRoute,
        ["name": "sheet", "transition": "modal"],
        ["name": "fault", "transition": "modal"],
    ],
]

/// The coordinator types this process declares.
let declared: JSONValue = options.routeTable.flatMap { try? JSONParser.parse($0) } ?? [defaultTable]

func routes(of type: String) -> [JSONValue] {
    declared.arrayValue?.first { $0["type"]?.stringValue == type }?["routes"]?.arrayValue ?? []
}

/// What a route shows: the coordinator it declares as its target, else a screen named after it.
func content(of route: JSONValue?, name: String, params: JSONValue?) -> JSONValue {
    if let target = route?["target"] { return ["coordinator": target] }
    return ["screen": ["name": .string(name), "props": params ?? [:]]]
}

/// A new instance's content, as its declaration says: a stack's initial route, every tab, a wrapper's child.
func initialContent(of type: String) -> JSONValue {
    let declaration = declared.arrayValue?.first { $0["type"]?.stringValue == type }
    let all = routes(of: type)
    func named(_ transition: String) -> [JSONValue] { all.filter { $0["transition"]?.stringValue == transition } }
    switch declaration?["kind"]?.stringValue {
    case "tabs":
        return [
            "tabs": .array(
                named("tab").map { tab in
                    let name = tab["name"]?.stringValue ?? "?"
                    return ["route": .string(name), "content": content(of: tab, name: name, params: nil)]
                })
        ]
    case "wrapper":
        return ["child": content(of: named("child").first, name: "child", params: nil)]
    default:
        let initial = declaration?["initialRoute"]?.stringValue ?? "bench"
        let root = all.first { $0["name"]?.stringValue == initial }
        return [
            "root": [
                "route": .string(initial),
                "content": content(of: root, name: initial == "bench" ? "Bench" : initial, params: nil),
            ]
        ]
    }
}

var messageCount = 0
var hanging = false
var shutdownReceived = false
var triggeredAt: Int?
/// Which run this is (from initialize's `restarts`), and whether faults apply in it.
var run = 0
var faulty: Bool { options.faultyRuns?.contains(run) ?? true }

/// Writes `lines` valid notifications in batches. Nonisolated: the SIGUSR1 flood runs on a Dispatch thread (the
/// main thread is busy reading stdin), where a main-actor function would fail its isolation check and crash.
nonisolated func flood(_ lines: Int) {
    let line = Message.notification(method: "log", params: ["level": "debug", "message": "flood"]).encodedLine()
    var batch: [UInt8] = []
    for _ in 0..<256 { batch += line }
    for _ in 0..<max(1, lines / 256) { writeStdout(batch) }
}

let floodSignal: (any DispatchSourceSignal)? =
    options.floodOnSignal ? DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global()) : nil
if let floodSignal {
    signal(SIGUSR1, SIG_IGN)
    let lines = options.floodLines
    floodSignal.setEventHandler { @Sendable in flood(lines) }
    floodSignal.resume()
}

/// Memory taken on SIGUSR2 and never given back (the main thread is busy reading stdin: the signal is handled on
/// another).
nonisolated let leaked = Mutex<[[UInt8]]>([])
let growSignal: (any DispatchSourceSignal)? =
    options.growOnSignal != nil ? DispatchSource.makeSignalSource(signal: SIGUSR2, queue: .global()) : nil
if let growSignal, let megabytes = options.growOnSignal {
    signal(SIGUSR2, SIG_IGN)
    growSignal.setEventHandler { @Sendable in
        let held = leaked.withLock { held in
            for _ in 0..<megabytes { held.append([UInt8](repeating: 0x5A, count: 1 << 20)) }
            return held.count
        }
        StandardError.write("misbehave: holding \(held) MiB\n")
    }
    growSignal.resume()
}

/// `coordinator/route` requests this process has answered (for --wrong-answer-every).
var routesAnswered = 0

func startStderrFlood() {
    DispatchQueue.global().async {
        let chunk = [UInt8](repeating: UInt8(ascii: "e"), count: 8_191) + [0x0A]
        while true { try? Descriptor.writeAll(2, chunk) }
    }
}

/// Mutated protocol lines: valid messages of every shape with bytes flipped, inserted, deleted or cut.
func fuzz() {
    var generator = SeededGenerator(seed: options.fuzzSeed)
    func random() -> UInt64 { generator.next() }
    let seeds: [Message] = [
        .notification(method: "log", params: ["level": "info", "message": "fuzz"]),
        .request(
            id: .string("f"), method: "navigate",
            params: ["instance": 1, "steps": [["op": "route", "route": "sample", "params": ["id": "1"]]]]),
        .request(id: .number(7), method: "tree/query", params: ["query": "topCoordinator"]),
        .response(id: .number(99_999), result: ["content": ["screen": ["name": "X"]]]),
        .errorResponse(id: .number(99_998), error: ResponseError(.rejectedByGuard, "no")),
    ]
    let structure = Array(#"{}[]":,\0e-"#.utf8) + [0x00, 0x0D, 0xFF, 0xC3]
    for _ in 0..<options.fuzzLines {
        var bytes = Array(seeds[Int(random() % UInt64(seeds.count))].encodedLine().dropLast())
        for _ in 0..<Int(random() % 3 + 1) where !bytes.isEmpty {
            let position = Int(random() % UInt64(bytes.count))
            switch random() % 4 {
            case 0: bytes[position] ^= UInt8(1 << (random() % 8))
            case 1: bytes.insert(structure[Int(random() % UInt64(structure.count))], at: position)
            case 2: bytes.remove(at: position)
            default: bytes = Array(bytes.prefix(position))
            }
        }
        writeStdout(bytes + [0x0A])
    }
}

func answer(_ id: RequestID, _ method: String, _ params: JSONValue?) {
    switch method {
    case InitializeRequest.method:
        run = params?["restarts"]?.intValue.map(Int.init) ?? 0
        // Once initialize arrives the host has placed this process in its containment (a cgroup move follows the
        // spawn), which is what the descendants test, not the spawn-to-move window; and they exist once it is ready.
        if !options.descendantsAtEOF && run == 0 { leaveDescendants() }
        if faulty, let code = options.exitInHandshake { exit(code) }
        if faulty && options.hangInHandshake { return }
        if faulty, let file = options.holdHandshakeUntil {
            while !FileSystem.exists(file) { usleep(10_000) }
        }
        let offered = params?["protocolVersions"]?.arrayValue?.compactMap(\.intValue).map(Int.init) ?? []
        let common = options.speaks.filter(offered.contains)
        guard let chosen = options.answerVersion ?? common.max() else {
            send(
                .errorResponse(
                    id: id,
                    error: ResponseError(
                        .unsupportedProtocolVersion, "misbehave speaks \(options.speaks), the host offers \(offered)",
                        data: ["supported": .array(options.speaks.map { .int(Int64($0)) })])))
            return
        }
        send(
            .response(
                id: id,
                result: [
                    "protocolVersion": .int(Int64(chosen)),
                    "plugin": ["name": .string(options.name), "version": "0.0.1"],
                    "coordinators": declared,
                ]))
        if options.floodStderr { startStderrFlood() }
        if faulty && options.fuzzLines > 0 { fuzz() }
    case "coordinator/create":
        if params?["restore"] != nil {
            if options.refuseRestore {
                send(
                    .errorResponse(
                        id: id, error: ResponseError(.internalError, "misbehave forgets everything on restart")))
            } else {
                send(.response(id: id, result: [:]))
            }
        } else {
            let type = params?["type"]?.stringValue ?? ""
            let bench: JSONValue = [
                "root": ["route": "bench", "content": ["screen": ["name": "Bench", "props": [:]]]]
            ]
            send(.response(id: id, result: options.playTable ? initialContent(of: type) : bench))
        }
    case "coordinator/route":
        let route = params?["route"]?.stringValue ?? "?"
        routesAnswered += 1
        if let slow = options.slowRoute, slow.route == route { usleep(UInt32(slow.milliseconds) * 1_000) }
        if let chatter = options.stderrOnRoute, chatter.route == route {
            let line = [UInt8](repeating: UInt8(ascii: "e"), count: max(0, chatter.line - 1)) + [0x0A]
            var remaining = chatter.bytes
            while remaining > 0 {
                try? Descriptor.writeAll(2, Array(line.prefix(remaining)))
                remaining -= line.count
            }
        }
        if let allocate = options.allocateOnRoute, allocate.route == route {
            let block = [UInt8](repeating: 0x5A, count: allocate.megabytes << 20)
            // The last byte read back: the allocation cannot be optimised away.
            writeStderr("misbehave: allocated \(block.count >> 20) MiB for '\(route)' (\(block.last ?? 0))\n")
        }
        if let open = options.openOnRoute, open.route == route, let failure = openPipes(open.pipes) {
            writeStderr("misbehave: cannot open descriptors for '\(route)': \(failure)\n")
            send(
                .errorResponse(
                    id: id,
                    error: ResponseError(.internalError, "misbehave cannot open descriptors: \(failure)")))
            return
        }
        if let oversize = options.answerOversize, oversize.route == route {
            let result: JSONValue = [
                "content": [
                    "screen": [
                        "name": .string(route),
                        "props": ["blob": .string(String(repeating: "x", count: oversize.bytes))],
                    ]
                ]
            ]
            send(.response(id: id, result: result))
            return
        }
        if let every = options.wrongAnswerEvery, routesAnswered % every == options.wrongAnswerPhase % every,
            let value = params?["params"]?["id"]?.stringValue
        {
            var wrong = params?["params"]?.objectValue ?? [:]
            wrong["id"] = .string(value + "-wrong")
            send(.response(id: id, result: ["content": ["screen": ["name": .string(route), "props": .object(wrong)]]]))
            return
        }
        if let code = options.refusals[route] {
            send(
                .errorResponse(
                    id: id,
                    error: ResponseError(
                        ErrorCode(rawValue: code), "misbehave refuses '\(route)'", data: ["refusedBy": "misbehave"])))
        } else if route == "sample", !options.acceptWrongTypes, params?["params"]?["id"]?.stringValue == nil {
            send(
                .errorResponse(
                    id: id,
                    error: ResponseError(
                        .invalidParams, "route 'sample' needs param 'id' (a string)", data: ["field": "id"])))
        } else if route == options.wrongContent {
            send(.response(id: id, result: ["content": ["coordinator": ["type": .string(options.typeName)]]]))
        } else {
            let declaration =
                options.playTable
                ? routes(of: params?["type"]?.stringValue ?? "").first { $0["name"]?.stringValue == route } : nil
            send(
                .response(id: id, result: ["content": content(of: declaration, name: route, params: params?["params"])])
            )
        }
    case "coordinator/action" where options.sampleActions:
        let entry = params?["entry"] ?? .null
        send(.response(id: id, result: ["steps": [["op": "pop", "entry": entry]]]))
    case PingRequest.method, "coordinator/destroy":
        send(.response(id: id, result: [:]))
    case ShutdownRequest.method:
        shutdownReceived = true
        send(.response(id: id, result: [:]))
    default:
        if options.answerUnknownMethods {
            send(.response(id: id, result: [:]))
        } else {
            send(.errorResponse(id: id, error: .methodNotFound(method)))
        }
    }
}

/// Members the spec defines, by where they appear (for --reject-unknown-members).
let knownMembers: [String: Set<String>] = [
    "envelope": ["jsonrpc", "id", "method", "params", "result", "error"],
    InitializeRequest.method: ["protocolVersions", "host", "pluginName", "limits", "restarts"],
    "limits": [
        "maxLineBytes", "maxMessagesPerSecond", "maxOutstandingRequests", "maxInstances", "maxStderrBytesPerSecond",
        "requestTimeoutMs", "heartbeatIntervalMs", "heartbeatTimeoutMs", "maxProtocolErrors",
    ],
    PingRequest.method: [],
    "coordinator/route": ["instance", "type", "route", "transition", "params", "link"],
]

/// The first member `line` carries that the spec does not define, if --reject-unknown-members looks for them.
func unknownMember(_ line: String) -> String? {
    guard options.rejectUnknownMembers, let value = try? JSONParser.parse(line), let envelope = value.objectValue else {
        return nil
    }
    func extra(_ object: JSONObject?, _ known: Set<String>?) -> String? {
        guard let object, let known else { return nil }
        return object.keys.first { !known.contains($0) }
    }
    let method = envelope["method"]?.stringValue ?? ""
    return extra(envelope, knownMembers["envelope"]) ?? extra(envelope["params"]?.objectValue, knownMembers[method])
        ?? extra(
            envelope["params"]?["limits"]?.objectValue,
            method == InitializeRequest.method ? knownMembers["limits"] : nil)
}

func handle(_ line: String) {
    let event = MessageReader.decodeLine(Array(line.utf8)[...], lineNumber: messageCount + 1)
    guard case .message(let message, _) = event else { return }
    messageCount += 1
    if let member = unknownMember(line), case .request(let id, _, _) = message {
        send(
            .errorResponse(
                id: id,
                error: ResponseError(
                    .invalidParams, "misbehave does not know the member '\(member)'", data: ["field": .string(member)]))
        )
        return
    }
    let n = messageCount
    if case .request(_, InitializeRequest.method, let params) = message {
        run = params?["restarts"]?.intValue.map(Int.init) ?? 0
    }
    guard faulty else {
        respondNormally(message)
        return
    }
    // With --trigger-route, "message N" is the message that takes that route.
    var isTrigger = false
    if let trigger = options.triggerRoute, case .request(_, "coordinator/route", let params) = message,
        params?["route"]?.stringValue == trigger
    {
        isTrigger = true
        triggeredAt = triggeredAt ?? n
    }
    func at(_ after: Int?) -> Bool { options.triggerRoute == nil ? after == n : (after != nil && isTrigger) }
    if at(options.crashAfter) { abort() }
    if at(options.exitAfter) { exit(options.exitStatus) }
    if at(options.hangAfter) { hanging = true }
    if at(options.printAfter) { writeStdout(Array("Hello from user code! debug value = 42\n".utf8)) }
    if at(options.oversizeAfter) {
        writeStdout([UInt8](repeating: UInt8(ascii: "x"), count: options.oversizeBytes) + [0x0A])
    }
    if at(options.floodAfter) { flood(options.floodLines) }
    if let garbage = options.garbageAfter, n >= (options.triggerRoute == nil ? garbage : (triggeredAt ?? .max)) {
        writeStdout(Array("this is not json {{{ \u{1}\n".utf8))
    }
    if at(options.stopReadingAfter) {
        // Park forever without reading: the host's writes pile up in the socket buffer.
        while true { pause() }
    }
    guard !hanging else { return }
    respondNormally(message)
}

func respondNormally(_ message: Message) {
    switch message {
    case .request(let id, let method, let params):
        if options.delayMs > 0 { usleep(UInt32(options.delayMs) * 1_000) }
        answer(id, method, params)
        if method == PingRequest.method, let text = options.navigateOnPing, let navigate = try? JSONParser.parse(text) {
            send(.request(id: .string("nav-\(messageCount)"), method: NavigateRequest.method, params: navigate))
        }
    case .notification(let method, _):
        if method == ExitNotification.method { exit(options.exitCode ?? (shutdownReceived ? 0 : 1)) }
    case .response, .errorResponse:
        writeStderr("misbehave: navigate answered \(JSONWriter.string(message.json))\n")
    }
}

while let line = readLine(strippingNewline: true) {
    handle(line)
}
if options.descendantsAtEOF { leaveDescendants() }
if options.ignoreEOF {
    while true { pause() }
}
exit(0)
