// swift-tools-version: 6.2
// Layout: one section per target and its tests, in dependency order; a settings loop at the end applies the
// package-wide Swift settings (as swift-nio does), so every target is built the same way.
import PackageDescription

// Start-up: with SWITCHYARD_STATIC_PLUGINS=1 the bundled Swift plugins link the Swift runtime statically: no
// libswiftCore, libdispatch or Foundation-free Swift libraries for the dynamic loader to find, map and relocate
// before `main`. (Not `-static-executable`: there `dispatchMain()`'s `pthread_exit` unwinds without
// `.eh_frame_hdr` and sorts every frame description first, ~34M instructions before `initialize` is served.)
// Opt-in, because SwiftPM links executable targets into the test bundle with their linker flags, and Swift
// Testing has no static library: `swift test` would not link. The benchmark and deployments build with it; a
// plugin package sets the flag in its own Package.swift (SwitchyardPlugin.docc, GettingStarted: "Start fast").
let staticPlugin: [LinkerSetting] =
    Context.environment["SWITCHYARD_STATIC_PLUGINS"] == "1"
    ? [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))] : []

let package = Package(
    name: "Switchyard",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "switchyard", targets: ["switchyard"]),
        .library(name: "SwitchyardPlugin", targets: ["SwitchyardPlugin"]),
        .library(name: "SwitchyardPluginTesting", targets: ["SwitchyardPluginTesting"]),
        .library(name: "SwitchyardProtocol", targets: ["SwitchyardProtocol"]),
        .library(name: "SwitchyardHost", targets: ["SwitchyardHost"]),
        .library(name: "SwitchyardClient", targets: ["SwitchyardClient"]),
        // Fault experiments from a user's Swift test: run an ExperimentSpec, assert on the checkers' results.
        .library(name: "SwitchyardChaos", targets: ["SwitchyardChaos"]),
    ],
    dependencies: [
        // 1.6: custom completions get the word being completed (`--app` lists the running hosts).
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // MARK: - System calls (POSIX, no libuv): the one syscall layer of the host, the control client and the SDK
        // What Swift cannot call directly (macros, variadic calls, _GNU_SOURCE declarations, C's `stdout`): a header.
        .systemLibrary(
            name: "CSwitchyardSystem"
        ),
        // With the libuv wrapper, the only module that touches pointers; everything else builds with strict memory
        // safety. Files, processes, sockets, threads, the terminal, /proc: EINTR retried, errno as a typed error.
        .target(
            name: "SwitchyardSystem",
            dependencies: ["CSwitchyardSystem"]
        ),
        .testTarget(
            name: "SwitchyardSystemTests",
            dependencies: ["SwitchyardSystem", "SwitchyardTestSupport"]
        ),

        // MARK: - libuv
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        // The libuv wrapper: the loop and its handles (pipes, processes, timers, signals, the listener, the executor).
        .target(
            name: "SwitchyardUV",
            dependencies: ["CLibUV", "SwitchyardSystem"]
        ),
        .testTarget(
            name: "SwitchyardUVTests",
            dependencies: ["SwitchyardUV", "SwitchyardSystem", "SwitchyardTestSupport"]
        ),

        // MARK: - Wire protocol (pure Swift, no Foundation: plugins link it and start-up time matters)
        .target(
            name: "SwitchyardProtocol",
            exclude: ["JSON/README.md"]
        ),
        .testTarget(
            name: "SwitchyardProtocolTests",
            dependencies: ["SwitchyardProtocol", "SwitchyardSpec", "SwitchyardTestSupport"]
        ),

        // MARK: - The spec's machine-checkable parts: the JSON Schema validator (Protocol/schema/) and transcripts
        // (Protocol/transcripts/). Not a test module: `switchyard check-plugin` validates a plugin's messages with it.
        // Kept out of the protocol module, which every plugin links.
        .target(
            name: "SwitchyardSpec",
            dependencies: ["SwitchyardProtocol"]
        ),

        // MARK: - Control client (no libuv: a tool that only talks to a running host builds without libuv1-dev)
        .target(
            name: "SwitchyardClient",
            dependencies: ["SwitchyardProtocol", "SwitchyardSystem"]
        ),
        // Depends on the client alone, so it also proves the client links without the host.
        .testTarget(
            name: "SwitchyardClientTests",
            dependencies: ["SwitchyardClient", "SwitchyardProtocol"]
        ),

        // MARK: - Navigation (pure: the tree, chains, deep links, composition, renderers; no processes)
        .target(
            name: "SwitchyardNavigation",
            dependencies: [
                "SwitchyardProtocol",
                .product(name: "HashTreeCollections", package: "swift-collections"),
            ]
        ),
        .testTarget(
            name: "SwitchyardNavigationTests",
            dependencies: ["SwitchyardNavigation", "SwitchyardProtocol"]
        ),

        // MARK: - Host
        .target(
            name: "SwitchyardHost",
            dependencies: [
                "SwitchyardUV",
                "SwitchyardSystem",
                "SwitchyardProtocol",
                "SwitchyardNavigation",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: [
                // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0461-async-function-isolation.md
                // The host's parts are non-Sendable objects owned by the `Host` actor; their async methods run on the
                // caller's executor (the loop), so a chain awaits its plugins without ever leaving the loop's thread.
                .enableUpcomingFeature("NonisolatedNonsendingByDefault")
            ]
        ),
        // Kills every plugin process group if the host dies (see its main.c). Plain C, spawned once per host.
        .executableTarget(
            name: "switchyard-guardian"
        ),

        // MARK: - Conformance checker (`switchyard check-plugin`): runs one plugin executable on its own through checks
        // that each cite the section of Protocol/README.md they enforce; a library the CLI calls. It plays the host
        // with the host's own pure parts (chains, deep links, composition) and spawns through SwitchyardUV.
        .target(
            name: "SwitchyardConformance",
            dependencies: [
                "SwitchyardNavigation", "SwitchyardProtocol", "SwitchyardSpec", "SwitchyardSystem", "SwitchyardUV",
            ]
        ),

        // MARK: - Chaos experiment (`switchyard chaos`): load, faults and the report, as a library the CLI calls
        .target(
            name: "SwitchyardChaos",
            dependencies: [
                "SwitchyardHost", "SwitchyardNavigation", "SwitchyardProtocol", "SwitchyardSystem", "SwitchyardUV",
                .product(name: "Logging", package: "swift-log"),
            ],
            // Chart.js, inlined into report.html: it reaches the code as EmbeddedChartJS.swift (Tests/embed-chartjs.py).
            exclude: ["Vendor"]
        ),
        // The history checkers on hand-written histories, the experiment file's decoding and the schedule: pure.
        .testTarget(
            name: "SwitchyardChaosTests",
            dependencies: [
                "SwitchyardChaos", "SwitchyardHost", "SwitchyardNavigation", "SwitchyardProtocol", "SwitchyardSpec",
                "SwitchyardSystem", "SwitchyardTestSupport", .product(name: "Logging", package: "swift-log"),
                // Built products the library test's host spawns; listing them makes `swift test` build them.
                "switchyard-guardian", "misbehave", "DemoMain", "DemoAuthenticated", "DemoTodos",
            ]
        ),

        // MARK: - Plugin SDK (no libuv: a plugin builds without libuv1-dev)
        .target(
            name: "SwitchyardPlugin",
            dependencies: ["SwitchyardProtocol", "SwitchyardSystem"],
            exclude: ["README.md"]
        ),

        // Plugin authors' tests: one plugin driven over the protocol (`PluginTestConnection`), and plugins run inside
        // the test by the real host with its navigation core (`NavigationTestStore`, the in-process tier). The one
        // user of the SDK's `@_spi(Testing)` hooks, so the SDK's public API stays what a plugin's `main` needs. It
        // links the host (libuv1-dev for tests); the SDK itself does not.
        .target(
            name: "SwitchyardPluginTesting",
            dependencies: [
                "SwitchyardPlugin", "SwitchyardProtocol", "SwitchyardHost", "SwitchyardNavigation", "SwitchyardUV",
                "SwitchyardSystem", .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Plugin logic tested in-process through SwitchyardPluginTesting: declarations, factories, guards, state,
        // deep links, chains; no spawn.
        .testTarget(
            name: "SwitchyardPluginTests",
            dependencies: ["SwitchyardPlugin", "SwitchyardPluginTesting"],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),

        // MARK: - CLI
        .executableTarget(
            name: "switchyard",
            dependencies: [
                "SwitchyardChaos",
                "SwitchyardConformance",
                "SwitchyardHost",
                "SwitchyardClient",
                "SwitchyardSystem",
                "SwitchyardUV",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // Built alongside, so `swift run switchyard run` works on a fresh clone: the guardian sits next to
                // the host, and the bundled demo plugins next to it where the manifest's `product` finds them.
                "switchyard-guardian",
                "HelloPlugin",
                "DemoMain",
                "DemoAuthenticated",
                "DemoTodos",
                // `switchyard chaos` puts it in the app as a process; listed only so it is built, never imported.
                "misbehave",
            ]
        ),

        // MARK: - Studio: a package of its own (Sources/Studio/Package.swift), so no other build resolves or compiles
        // SwiftNIO and Hummingbird; `switchyard studio` builds it on first use, the tests once per run.

        // MARK: - Plugins (executables, not SwiftPM plugins)
        .executableTarget(
            name: "HelloPlugin",
            dependencies: ["SwitchyardPlugin", "SwitchyardProtocol"],
            path: "Plugins/swift/hello",
            swiftSettings: [.defaultIsolation(MainActor.self)],
            linkerSettings: staticPlugin
        ),
        // The plugin as a library (its coordinators and `Plugin` value) and a one-line executable serving it on stdio:
        // the in-process test tier runs the library inside the test process.
        .target(
            name: "DemoMainPlugin",
            dependencies: ["SwitchyardPlugin", "SwitchyardProtocol"],
            path: "Plugins/swift/main",
            exclude: ["Executable"],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
        .executableTarget(
            name: "DemoMain",
            dependencies: ["DemoMainPlugin", "SwitchyardPlugin"],
            path: "Plugins/swift/main/Executable",
            swiftSettings: [.defaultIsolation(MainActor.self)],
            linkerSettings: staticPlugin
        ),
        // The plugin as a library (its coordinators and `Plugin` value) and a one-line executable serving it on stdio:
        // the in-process test tier runs the library inside the test process.
        .target(
            name: "DemoAuthenticatedPlugin",
            dependencies: ["SwitchyardPlugin", "SwitchyardProtocol"],
            path: "Plugins/swift/authenticated",
            exclude: ["Executable"],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
        .executableTarget(
            name: "DemoAuthenticated",
            dependencies: ["DemoAuthenticatedPlugin", "SwitchyardPlugin"],
            path: "Plugins/swift/authenticated/Executable",
            swiftSettings: [.defaultIsolation(MainActor.self)],
            linkerSettings: staticPlugin
        ),
        // The plugin as a library (its coordinators and `Plugin` value) and a one-line executable serving it on stdio:
        // the in-process test tier runs the library inside the test process.
        .target(
            name: "DemoTodosPlugin",
            dependencies: ["SwitchyardPlugin", "SwitchyardProtocol"],
            path: "Plugins/swift/todos",
            exclude: ["Executable"],
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
        .executableTarget(
            name: "DemoTodos",
            dependencies: ["DemoTodosPlugin", "SwitchyardPlugin"],
            path: "Plugins/swift/todos/Executable",
            swiftSettings: [.defaultIsolation(MainActor.self)],
            linkerSettings: staticPlugin
        ),
        .executableTarget(
            name: "misbehave",
            dependencies: [
                "SwitchyardProtocol",
                // SystemProcess.run, to leave descendants (--descendants) without forking a threaded Swift process.
                "SwitchyardSystem",
            ],
            path: "Plugins/misbehave",
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),

        // Plays the plugin side of a Protocol/transcripts file against a real host (spec/code drift guard).
        .executableTarget(
            name: "transcript-replayer",
            dependencies: [
                "SwitchyardProtocol",
                "SwitchyardSpec",
                "SwitchyardSystem",
            ],
            path: "Plugins/transcript-replayer",
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),

        // MARK: - Tests of the host: its semantics through the real host, each suite in both tiers where it can be
        // (plugins in this process, or each its own process through real pipes), and its rules on a manual clock.
        .testTarget(
            name: "SwitchyardHostTests",
            dependencies: [
                "DemoMainPlugin",
                "DemoAuthenticatedPlugin",
                "DemoTodosPlugin",
                "InProcessDemo",
                "SwitchyardPluginTesting",
                "SwitchyardPlugin",
                "SwitchyardConformance",
                "SwitchyardHost",
                "SwitchyardClient",
                "SwitchyardNavigation",
                "SwitchyardProtocol",
                "SwitchyardSpec",
                "SwitchyardSystem",
                "SwitchyardUV",
                "SwitchyardTestSupport",
                "SwitchyardHostTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // Built products the tests spawn; listing them makes `swift test` build them.
                "switchyard",
                "switchyard-guardian",
                "HelloPlugin",
                "misbehave",
                "transcript-replayer",
                "DemoMain",
                "DemoAuthenticated",
                "DemoTodos",
                // Built and smoke-run (`--quick`, no timing assertions) so the benchmark cannot rot.
                "switchyard-bench",
            ]
        ),
        // Process-level behaviour: containment of descendants, orphans, stalls, floods, descriptors, lifecycle.
        .testTarget(
            name: "SwitchyardProcessTests",
            dependencies: [
                "InProcessDemo",
                "SwitchyardPluginTesting",
                "SwitchyardPlugin",
                "SwitchyardConformance",
                "SwitchyardHost",
                "SwitchyardClient",
                "SwitchyardNavigation",
                "SwitchyardProtocol",
                "SwitchyardSpec",
                "SwitchyardSystem",
                "SwitchyardUV",
                "SwitchyardTestSupport",
                "SwitchyardHostTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // Built products the tests spawn; listing them makes `swift test` build them.
                "switchyard",
                "switchyard-guardian",
                "HelloPlugin",
                "misbehave",
                "transcript-replayer",
                "DemoMain",
                "DemoAuthenticated",
                "DemoTodos",
                // Built and smoke-run (`--quick`, no timing assertions) so the benchmark cannot rot.
                "switchyard-bench",
            ]
        ),
        // The CLI as a user runs it: commands, the first hour, init templates, check-plugin, contracts, the README.
        .testTarget(
            name: "SwitchyardCLITests",
            dependencies: [
                "InProcessDemo",
                "SwitchyardPluginTesting",
                "SwitchyardPlugin",
                "SwitchyardConformance",
                "SwitchyardHost",
                "SwitchyardClient",
                "SwitchyardNavigation",
                "SwitchyardProtocol",
                "SwitchyardSpec",
                "SwitchyardSystem",
                "SwitchyardUV",
                "SwitchyardTestSupport",
                "SwitchyardHostTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // Built products the tests spawn; listing them makes `swift test` build them.
                "switchyard",
                "switchyard-guardian",
                "HelloPlugin",
                "misbehave",
                "transcript-replayer",
                "DemoMain",
                "DemoAuthenticated",
                "DemoTodos",
                // Built and smoke-run (`--quick`, no timing assertions) so the benchmark cannot rot.
                "switchyard-bench",
            ]
        ),
        // The Python and Node SDKs as packages, their type checks, async handlers, and plugins built elsewhere.
        .testTarget(
            name: "SwitchyardSDKTests",
            dependencies: [
                "InProcessDemo",
                "SwitchyardPluginTesting",
                "SwitchyardPlugin",
                "SwitchyardConformance",
                "SwitchyardHost",
                "SwitchyardClient",
                "SwitchyardNavigation",
                "SwitchyardProtocol",
                "SwitchyardSpec",
                "SwitchyardSystem",
                "SwitchyardUV",
                "SwitchyardTestSupport",
                "SwitchyardHostTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // Built products the tests spawn; listing them makes `swift test` build them.
                "switchyard",
                "switchyard-guardian",
                "HelloPlugin",
                "misbehave",
                "transcript-replayer",
                "DemoMain",
                "DemoAuthenticated",
                "DemoTodos",
                // Built and smoke-run (`--quick`, no timing assertions) so the benchmark cannot rot.
                "switchyard-bench",
            ]
        ),
        // The Studio in headless Chromium.
        .testTarget(
            name: "SwitchyardStudioTests",
            dependencies: [
                "InProcessDemo",
                "SwitchyardPluginTesting",
                "SwitchyardPlugin",
                "SwitchyardConformance",
                "SwitchyardHost",
                "SwitchyardClient",
                "SwitchyardNavigation",
                "SwitchyardProtocol",
                "SwitchyardSpec",
                "SwitchyardSystem",
                "SwitchyardUV",
                "SwitchyardTestSupport",
                "SwitchyardHostTestSupport",
                .product(name: "Logging", package: "swift-log"),
                // Built products the tests spawn; listing them makes `swift test` build them.
                "switchyard",
                "switchyard-guardian",
                "HelloPlugin",
                "misbehave",
                "transcript-replayer",
                "DemoMain",
                "DemoAuthenticated",
                "DemoTodos",
                // Built and smoke-run (`--quick`, no timing assertions) so the benchmark cannot rot.
                "switchyard-bench",
            ]
        ),

        // MARK: - Benchmark (release build; not part of CI's pass/fail, but built and smoke-run so it cannot rot)
        .executableTarget(
            name: "switchyard-bench",
            dependencies: [
                "SwitchyardHost",
                "SwitchyardClient",
                "SwitchyardNavigation",
                "SwitchyardProtocol",
                "SwitchyardSystem",
                "SwitchyardUV",
                .product(name: "Logging", package: "swift-log"),
                // Everything it spawns, so one build command is enough.
                "switchyard",
                "switchyard-echo",
                "switchyard-c-plugin",
                "switchyard-c-host",
                "BenchPlugin",
                "HelloPlugin",
                "switchyard-guardian",
            ],
            path: "Benchmarks/switchyard-bench"
        ),
        // The floors: a raw echo child, the smallest C plugin, and a C libuv host.
        .executableTarget(
            name: "switchyard-echo",
            path: "Benchmarks/echo-child"
        ),
        .executableTarget(
            name: "switchyard-c-plugin",
            path: "Benchmarks/c-plugin"
        ),
        .executableTarget(
            name: "switchyard-c-host",
            dependencies: ["CLibUV"],
            path: "Benchmarks/c-host"
        ),
        .executableTarget(
            name: "BenchPlugin",
            dependencies: ["SwitchyardPlugin"],
            path: "Benchmarks/bench-plugin",
            swiftSettings: [.defaultIsolation(MainActor.self)],
            linkerSettings: staticPlugin
        ),

        // MARK: - Test support (package-internal: no product; the public one, for plugin authors, is
        // SwitchyardPluginTesting, and the shipped CLI links none of them: DependencyTests checks it)
        // The core (deadlines, change notification, product paths, CLI processes, schemas, probes, the heavy-suite
        // trait) needs no host, so the protocol and libuv tests link neither the host nor its dependencies.
        .target(
            name: "SwitchyardTestSupport",
            dependencies: ["SwitchyardProtocol", "SwitchyardSpec", "SwitchyardSystem", "SwitchyardUV"],
            path: "Tests/SwitchyardTestSupport"
        ),
        // In-process hosts for the integration tests: withHost, log capture, event logs, the test plugins.
        .target(
            name: "SwitchyardHostTestSupport",
            dependencies: [
                "SwitchyardClient",
                "SwitchyardHost",
                "SwitchyardProtocol",
                "SwitchyardSystem",
                "SwitchyardTestSupport",
                "SwitchyardUV",
                "SwitchyardPlugin",
                "SwitchyardPluginTesting",
                "InProcessDemo",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SwitchyardHostTestSupport"
        ),
        // The demo app's plugins as Swift values for the in-process test tier: the Swift plugins' own libraries, and
        // Swift stand-ins of the Python and Node ones (held to their committed route contracts by a test).
        .target(
            name: "InProcessDemo",
            dependencies: [
                "SwitchyardPlugin", "SwitchyardProtocol",
                "DemoMainPlugin", "DemoAuthenticatedPlugin", "DemoTodosPlugin",
            ],
            path: "Tests/InProcessDemo",
            swiftSettings: [.defaultIsolation(MainActor.self)]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: - Documentation

// The DocC plugin, only when asked for: SwiftPM compiles every plugin in the graph before each first build, so as a
// plain dependency it would cost every plugin package that depends on this one two more clones and ~30 s.
//   SWITCHYARD_DOCS=1 swift package generate-documentation --target SwitchyardPlugin
if Context.environment["SWITCHYARD_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}

// MARK: - Package-wide settings

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings += [
        // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md
        .enableUpcomingFeature("InternalImportsByDefault"),
        // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
        .enableUpcomingFeature("MemberImportVisibility"),
        // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
        .enableUpcomingFeature("ExistentialAny"),
        // No warnings: a warning today is a bug report tomorrow.
        .treatAllWarnings(as: .error),
    ]
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0458-strict-memory-safety.md
    // The libuv wrapper and the syscall layer are the modules allowed to use pointers; the compiler holds that line
    // for the rest, tests included: a test that needs a pointer says `unsafe` where it takes one.
    if !["SwitchyardUV", "SwitchyardSystem"].contains(target.name) {
        settings.append(.strictMemorySafety())
    }
    target.swiftSettings = settings
}
