// swift-tools-version:6.2
import PackageDescription

// One networking module for Apple platforms and Linux: Alamofire where URLSession does the work,
// AlamofireNIO on Linux. The choice is made here, where the manifest is evaluated, so a Linux build
// never resolves Alamofire and an Apple build never resolves AlamofireNIO.
//
// On Linux a one-line target named `Alamofire` re-exports AlamofireNIO, so the sources say
// `import Alamofire` (and `Alamofire.Session`) on every platform. SwiftPM's `moduleAliases` cannot
// do this: it renames the built module but makes the sources keep the original name (Swift 6.3.1
// passes `-module-alias AlamofireNIO=Alamofire`, and `import Alamofire` is then an error).

#if os(Linux)
// In your own package: .package(url: "<AlamofireNIO's repository>", from: "<version>"). This example
// uses the checkout it lives in; a path dependency's identity is its directory's name.
let alamofireNIOIdentity =
    Context.packageDirectory.split(separator: "/").dropLast(2).last.map { String($0).lowercased() } ?? "alamofirenio"
let networkingPackage: Package.Dependency = .package(path: "../..")
let networking: Target.Dependency = "Alamofire"
let networkingTargets: [Target] = [
    .target(name: "Alamofire", dependencies: [.product(name: "AlamofireNIO", package: alamofireNIOIdentity)])
]
#else
let networkingPackage: Package.Dependency = .package(url: "https://github.com/Alamofire/Alamofire.git", from: "5.12.0")
let networking: Target.Dependency = .product(name: "Alamofire", package: "Alamofire")
let networkingTargets: [Target] = []
#endif

let package = Package(
    name: "CrossPlatform",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ITunesSearch", targets: ["ITunesSearch"])
    ],
    dependencies: [networkingPackage],
    targets: networkingTargets + [
        .target(name: "ITunesSearch", dependencies: [networking]),
        .testTarget(name: "ITunesSearchTests", dependencies: ["ITunesSearch", networking]),
    ]
)
