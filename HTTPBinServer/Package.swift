// swift-tools-version:6.2
import PackageDescription

/// Settings shared by every target: Swift 6 mode with the upcoming features Hummingbird uses.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// The development server of AlamofireNIO's tests, tour and benchmarks: an httpbin.org-compatible
// server, a test proxy (forward, `CONNECT`, SOCKS5) and a WebSocket test server. It is a package of
// its own so that its dependencies (Hummingbird and what it pulls in) never reach the library's users:
// the root package uses it only from targets that are not products, which SwiftPM does not resolve
// for a package that depends on AlamofireNIO.
let package = Package(
    name: "HTTPBinServer",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "HTTPBinServer", targets: ["HTTPBinServer"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.5.2"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "HTTPBinServer",
            dependencies: [
                "CHTTPBinZlib",
                "CHTTPBinBrotli",
                "CHTTPBinZstd",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The system zlib, for the gzip/deflate endpoints and PNG images (a module of its own name,
        // since the library's `CZlib` is in the same build graph).
        .systemLibrary(
            name: "CHTTPBinZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // The system's Brotli and Zstandard encoders, for the br and zstd endpoints.
        .systemLibrary(name: "CHTTPBinBrotli", pkgConfig: "libbrotlienc", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CHTTPBinZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
    ]
)
