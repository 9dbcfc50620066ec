// swift-tools-version:6.2
import PackageDescription

/// Settings shared by every target: Swift 6 mode with the upcoming features Hummingbird uses.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The development server, from the sibling package in `HTTPBinServer/`.
let httpBinServer: Target.Dependency = .product(name: "HTTPBinServer", package: "HTTPBinServer")

// The products are the library and its integrations (behind traits that are off by default). The
// tour, the probes, the tools, the server command and the tests are targets without products, so a
// package depending on AlamofireNIO resolves none of their dependencies
// (`Scripts/check-consumer-dependencies.sh` counts what it resolves).
let package = Package(
    name: "AlamofireNIO",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AlamofireNIO", targets: ["AlamofireNIO"]),
        // AlamofireNIO under Alamofire's module name, for code written for Alamofire to compile on
        // Linux with no change: `import Alamofire`, `Alamofire.Session`, `import enum Alamofire.AFError`.
        .library(name: "Alamofire", targets: ["Alamofire"]),
        // Integrations, each a product of its own behind a trait that is off by default: a package that
        // does not enable the trait resolves none of its dependencies.
        .library(name: "AlamofireNIOTracing", targets: ["AlamofireNIOTracing"]),
        .library(name: "AlamofireNIOMetrics", targets: ["AlamofireNIOMetrics"]),
        .library(name: "AlamofireNIOCombine", targets: ["AlamofireNIOCombine"]),
        .library(name: "AlamofireNIOOpenAPI", targets: ["AlamofireNIOOpenAPI"]),
    ],
    traits: [
        .trait(name: "Tracing", description: "AlamofireNIOTracing: a swift-distributed-tracing span per request."),
        .trait(name: "Metrics", description: "AlamofireNIOMetrics: swift-metrics for requests, bytes, retries and more."),
        .trait(name: "Combine", description: "AlamofireNIOCombine: Alamofire's Combine publishers (OpenCombine where Combine is missing)."),
        .trait(name: "OpenAPI", description: "AlamofireNIOOpenAPI: a swift-openapi-runtime ClientTransport that sends through a Session."),
        .trait(name: "Brotli", description: "Decodes br responses with the system's libbrotlidec (Debian: libbrotli-dev) and asks for them first, as Alamofire does on Apple platforms."),
        .trait(name: "Zstd", description: "Decodes zstd responses with the system's libzstd (Debian: libzstd-dev)."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.5.2"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // The integrations' libraries, resolved only when their trait is enabled.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // The command-line tools' argument parsing, used only by targets that are not products.
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // The development server (tests, tour, probes), used only by targets that are not products.
        .package(path: "HTTPBinServer"),
        // `swift package generate-documentation`; used by no target, so never resolved for users.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Layer 3: Alamofire's API. It uses the transport only to build it for the loading layer (in `Session.swift`).
        .target(
            name: "AlamofireNIO",
            dependencies: [
                "AlamofireNIOLoading",
                "AFCollections",
                "AFSynchronization",
                "AlamofireNIOTransport",
                "CZlib",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Certificates, keys and OCSP for the server trust evaluators.
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Re-exports AlamofireNIO (with its WebSocket SPI) as the module `Alamofire`.
        .target(name: "Alamofire", dependencies: ["AlamofireNIO"], swiftSettings: swiftSettings),
        // Layer 2: one task per attempt of a request, with URLSession's policies and delegate events.
        .target(
            name: "AlamofireNIOLoading",
            dependencies: [
                "AlamofireNIOTransport",
                "AFSynchronization",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                // The negotiated TLS version's type, for the metrics.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Digest authentication's hashes (SHA-512-256 is in CryptoExtras).
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                // The certificates of the trust hook, client identities and OCSP queries it hands the API layer.
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Layer 1: one HTTP exchange at a time, no policy.
        .target(
            name: "AlamofireNIOTransport",
            dependencies: [
                "AFCollections",
                // zlib for WebSocket permessage-deflate.
                "CZlib",
                // The br and zstd decoders, behind their traits.
                .target(name: "CBrotli", condition: .when(traits: ["Brotli"])),
                .target(name: "CZstd", condition: .when(traits: ["Zstd"])),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Small collections for what the package makes per request (a list that keeps its first element inline).
        .target(name: "AFCollections", swiftSettings: swiftSettings),
        // `Mutex` as the package's modules name it: Synchronization's, with its locking shown to ThreadSanitizer.
        .target(name: "AFSynchronization", dependencies: ["CThreadSanitizer"], swiftSettings: swiftSettings),
        // ThreadSanitizer's annotation functions, weak: present only in a `--sanitize=thread` build.
        .target(name: "CThreadSanitizer"),
        // Integrations (see the products): empty modules unless their trait is enabled.
        .target(
            name: "AlamofireNIOTracing",
            dependencies: [
                "AlamofireNIO",
                "AFSynchronization",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AlamofireNIOMetrics",
            dependencies: [
                "AlamofireNIO",
                "AFSynchronization",
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AlamofireNIOCombine",
            dependencies: [
                "AlamofireNIO",
                "AFSynchronization",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux], traits: ["Combine"])),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AlamofireNIOOpenAPI",
            dependencies: [
                "AlamofireNIO",
                // The streamed request body's type, shared with the API layer at package level.
                "AlamofireNIOLoading",
                "AFSynchronization",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPI"])),
            ],
            swiftSettings: swiftSettings
        ),
        // The system zlib: request compression and WebSocket permessage-deflate.
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // The system's Brotli and Zstandard decoders, used only with the `Brotli` and `Zstd` traits.
        .systemLibrary(name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // Starts the tests' helper programs without Foundation's `Process` (see ChildProcess.swift).
        .target(name: "ChildProcess", dependencies: ["AFSynchronization"], swiftSettings: swiftSettings),
        // The tests' waits with a deadline (`withTimeout`), shared by every test target.
        .target(name: "TestWaits", dependencies: ["AFSynchronization"], swiftSettings: swiftSettings),
        // Moves one large body through the transport and reports its own peak memory, for the tests.
        .executableTarget(
            name: "transport-probe",
            dependencies: [
                "AlamofireNIOTransport", "ChildProcess", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Runs a soak of requests, or a slowly consumed stream from a server of its own, through a
        // Session and reports its own memory, for the tests.
        .executableTarget(
            name: "alamofire-probe",
            dependencies: ["AlamofireNIO", "AlamofireNIOLoading", httpBinServer, "ChildProcess", "CMallocStatistics"],
            swiftSettings: swiftSettings
        ),
        // The C allocator's bytes in use, for the probe's leak checks.
        .target(name: "CMallocStatistics"),
        // libFuzzer's driver, weakly linked: a build with -sanitize=fuzzer fuzzes, a plain one replays.
        .target(name: "CFuzzingDriver"),
        // A fuzz target for each parser that reads bytes from a server or a user (Scripts/fuzz.sh).
        .executableTarget(
            name: "alamofire-fuzz",
            dependencies: [
                "AlamofireNIO", "AlamofireNIOLoading", "AlamofireNIOTransport", "CFuzzingDriver",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The tour of Alamofire's usage guide against the bundled server: the README's main command.
        .executableTarget(
            name: "af-tour",
            dependencies: ["AlamofireNIO", httpBinServer],
            swiftSettings: swiftSettings
        ),
        // The StoreSearch chapter's iTunes Search client, as a library and a command.
        .target(name: "StoreSearchKit", dependencies: ["AlamofireNIO", "AFSynchronization"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "storesearch",
            dependencies: ["StoreSearchKit", "AlamofireNIO", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings
        ),
        // `af`, an HTTPie-style client: the command and its parts in a library the tests use, the
        // program a one-line main.
        .target(
            name: "AFCommandLine",
            dependencies: [
                "AlamofireNIO", "AFSynchronization", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "af",
            dependencies: ["AFCommandLine", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "httpbin-server",
            dependencies: [httpBinServer, "ChildProcess"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AlamofireNIOTests",
            dependencies: [
                "AlamofireNIO", "AlamofireNIOLoading", "alamofire-probe", "alamofire-fuzz", httpBinServer, "ChildProcess", "AFSynchronization",
                "TestWaits",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Alamofire-style code in the Swift 5 language mode, as much of it is written: handlers that mutate
        // captured variables compile without a warning (and CI fails on a warning).
        .testTarget(
            name: "Swift5LanguageModeTests",
            dependencies: ["AlamofireNIO", httpBinServer, "TestWaits"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The tools: StoreSearch and `af`, as values and end to end against the bundled server.
        .testTarget(
            name: "ToolsTests",
            dependencies: [
                "StoreSearchKit", "storesearch", "AFCommandLine", "af", "AlamofireNIO", httpBinServer, "ChildProcess", "AFSynchronization",
                "TestWaits",
            ],
            swiftSettings: swiftSettings
        ),
        // The integrations, with the in-memory tracer and the metrics test kit (`--enable-all-traits`).
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "AlamofireNIO", "AlamofireNIOTracing", "AlamofireNIOMetrics", "AlamofireNIOCombine", "AlamofireNIOOpenAPI", httpBinServer,
                "AFSynchronization", "TestWaits",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["OpenAPI"])),
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux], traits: ["Combine"])),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The OpenAPI document the committed client in `OpenAPI/Generated` was generated from.
            exclude: ["OpenAPI/openapi.yaml", "OpenAPI/openapi-generator-config.yaml"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AlamofireNIOLoadingTests",
            dependencies: [
                "AlamofireNIOLoading", "AlamofireNIOTransport", httpBinServer, "AFSynchronization",
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AlamofireNIOTransportTests",
            dependencies: [
                "AlamofireNIOTransport",
                "AFCollections",
                "transport-probe",
                httpBinServer,
                "ChildProcess",
                "TestWaits",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPBinServerTests",
            dependencies: [
                httpBinServer,
                "httpbin-server",
                "CZlib",
                "ChildProcess",
                "TestWaits",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
