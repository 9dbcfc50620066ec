// swift-tools-version:6.2
import PackageDescription

// The library is the package one directory up; a path dependency's identity is its directory's name.
let libraryIdentity = Context.packageDirectory.split(separator: "/").dropLast().last.map { String($0).lowercased() } ?? "main"

let package = Package(
    name: "AlamofireNIOBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(path: "../HTTPBinServer"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // The HTTPS workloads' trust roots for AsyncHTTPClient.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        .executableTarget(
            name: "bench",
            dependencies: [
                .product(name: "AlamofireNIO", package: libraryIdentity),
                .product(name: "HTTPBinServer", package: "HTTPBinServer"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
