// swift-tools-version: 6.2
// Layout: one section per target and its tests, in dependency order; a settings loop at the end applies the
// package-wide Swift settings (as swift-nio does), so every target is built the same way.
import PackageDescription

let package = Package(
    name: "Switchyard",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SwitchyardProtocol", targets: ["SwitchyardProtocol"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
    ],
    targets: [
        // MARK: - libuv
        .systemLibrary(
            name: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"])]
        ),
        // The only module that touches pointers. Everything else builds with strict memory safety.
        .target(
            name: "SwitchyardUV",
            dependencies: ["CLibUV"]
        ),
        .testTarget(
            name: "SwitchyardUVTests",
            dependencies: ["SwitchyardUV", "SwitchyardTestSupport"]
        ),

        // MARK: - Wire protocol (pure Swift, no Foundation: plugins link it and start-up time matters)
        .target(
            name: "SwitchyardProtocol"
        ),
        .testTarget(
            name: "SwitchyardProtocolTests",
            dependencies: ["SwitchyardProtocol", "SwitchyardTestSupport"]
        ),

        // MARK: - Test support
        .target(
            name: "SwitchyardTestSupport",
            dependencies: ["SwitchyardProtocol", "SwitchyardUV"],
            path: "Tests/SwitchyardTestSupport"
        ),
    ],
    swiftLanguageModes: [.v6]
)

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
    // The libuv wrapper is the one module allowed to use pointers; the compiler holds that line for the rest.
    if target.name != "SwitchyardUV" && target.type != .test {
        settings.append(.strictMemorySafety())
    }
    target.swiftSettings = settings
}
