// swift-tools-version: 6.0
// The Swift peers of `switchyard-bench --peers`: hosts a Swift user would pick instead of Switchyard, each with the
// child it would talk to. A package of its own so Switchyard itself never depends on the MCP SDK or on Foundation.
//
//   swift build -c release --package-path Benchmarks/peers     (switchyard-bench --peers runs this when needed)
import PackageDescription

let mcp: Target.Dependency = .product(name: "MCP", package: "swift-sdk")

let package = Package(
    name: "SwitchyardPeers",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", exact: "0.12.1"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
    ],
    targets: [
        // The measuring loop every Swift peer host shares: sequential round trips, then a windowed burst.
        .target(name: "PeerHarness"),
        // Foundation's `Process` + `Pipe`, `JSONEncoder`/`JSONDecoder` on both sides.
        .executableTarget(name: "foundation-host", dependencies: ["PeerHarness"]),
        .executableTarget(name: "foundation-child"),
        // The MCP Swift SDK: its `Client` and `Server` over its `StdioTransport`, MCP's own `ping`.
        .executableTarget(
            name: "mcp-host",
            dependencies: ["PeerHarness", mcp, .product(name: "SystemPackage", package: "swift-system")]),
        .executableTarget(name: "mcp-child", dependencies: [mcp]),
    ]
)
