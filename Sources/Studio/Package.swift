// swift-tools-version: 6.2
// The Studio (`switchyard studio`, `run --studio`): the app live in a browser, an inspector beside it. A package of
// its own, so SwiftNIO and Hummingbird are in no other build: `swift run switchyard run` resolves and compiles none
// of them (a quarter of a cold first build), and the host, the CLI and the SDK cannot link them by accident.
// `switchyard studio` builds it on first use from a source checkout; the tests build it once per run.
//
//   swift build --package-path Sources/Studio --scratch-path .build/studio --product switchyard-studio
import PackageDescription

let package = Package(
    name: "SwitchyardStudio",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "switchyard-studio", targets: ["switchyard-studio"])
    ],
    dependencies: [
        .package(name: "Switchyard", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
    ],
    targets: [
        // A separate executable the CLI starts, talking to the host only through the control socket, as any client.
        // The page is plain HTML, CSS and JavaScript modules, served from the target's resources (no build step).
        .target(
            name: "SwitchyardStudio",
            dependencies: [
                .product(name: "SwitchyardClient", package: "Switchyard"),
                .product(name: "SwitchyardProtocol", package: "Switchyard"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ],
            path: "SwitchyardStudio",
            resources: [.copy("Page")]
        ),
        .executableTarget(
            name: "switchyard-studio",
            dependencies: [
                "SwitchyardStudio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "switchyard-studio"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The root package's settings (its Package.swift, "Package-wide settings"), so the Studio is built as the rest is.
for target in package.targets {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("ExistentialAny"),
            .treatAllWarnings(as: .error),
            .strictMemorySafety(),
        ]
}
