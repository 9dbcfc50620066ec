// swift-tools-version:6.2
import PackageDescription

// One networking module for Apple platforms and Linux: Alamofire where URLSession does the work,
// AlamofireNIO on Linux. The choice is made here, where the manifest is evaluated, so a Linux build
// never resolves Alamofire and an Apple build never resolves AlamofireNIO.
//
// On Linux, AlamofireNIO's `Alamofire` product presents it as the module `Alamofire`, so the
// sources say `import Alamofire`, `Alamofire.Session` and `import enum Alamofire.AFError` on every
// platform. The choice must be `#if` here: with both packages in one graph, SwiftPM 6.3 refuses two
// targets named `Alamofire` whatever `.when(platforms:)` conditions the dependencies carry, and
// `moduleAliases` renames the built module but makes the sources keep the original name.

#if os(Linux)
// In your own package: .package(url: "<AlamofireNIO's repository>", from: "<version>"). This example
// uses the checkout it lives in; a path dependency's identity is its directory's name.
let alamofireNIOIdentity =
    Context.packageDirectory.split(separator: "/").dropLast(2).last.map { String($0).lowercased() } ?? "alamofirenio"
let networkingPackage: Package.Dependency = .package(path: "../..")
let networking: Target.Dependency = .product(name: "Alamofire", package: alamofireNIOIdentity)
#else
let networkingPackage: Package.Dependency = .package(url: "https://github.com/Alamofire/Alamofire.git", from: "5.12.0")
let networking: Target.Dependency = .product(name: "Alamofire", package: "Alamofire")
#endif

let package = Package(
    name: "CrossPlatform",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ITunesSearch", targets: ["ITunesSearch"])
    ],
    dependencies: [networkingPackage],
    targets: [
        .target(name: "ITunesSearch", dependencies: [networking]),
        .testTarget(name: "ITunesSearchTests", dependencies: ["ITunesSearch", networking]),
    ]
)
