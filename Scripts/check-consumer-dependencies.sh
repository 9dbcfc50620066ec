#!/usr/bin/env bash
# Resolves tiny packages that depend on this checkout and use only the `AlamofireNIO` product (one the `Alamofire` product),
# and fails if it resolves more than the library's own dependencies need: at most 17 packages besides
# AlamofireNIO, and none of the development server's (Hummingbird and what it pulls in), the
# benchmarks' or the documentation plugin's. It resolves twice: by path, and by URL at the committed
# HEAD, as a user's package would name a released version (SwiftPM refuses a path dependency
# reached through a URL one unless it is pruned, as the test server's must be). The integrations'
# packages (tracing, metrics, OpenCombine, the OpenAPI runtime) must not appear unless their traits are enabled, which a
# third consumer does, to check that they then come in.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
limit=17
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# $1: a name, $2: the dependency line, $3: the package identity, $4: the product (AlamofireNIO by default).
check() {
    local consumer="$scratch/$1"
    local product="${4:-AlamofireNIO}"
    mkdir -p "$consumer/Sources/Consumer"
    cat >"$consumer/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription
let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [$2],
    targets: [
        .target(name: "Consumer", dependencies: [.product(name: "$product", package: "$3")])
    ]
)
MANIFEST
    echo "import $product" >"$consumer/Sources/Consumer/Consumer.swift"
    if ! (cd "$consumer" && swift package resolve >"$consumer/resolve.log" 2>&1); then
        cat "$consumer/resolve.log"
        echo "error: the consumer package ($1) does not resolve"
        exit 1
    fi
    local pins count forbidden
    pins=$(grep -o '"identity" : "[^"]*"' "$consumer/Package.resolved" | sed 's/.*: "\(.*\)"/\1/' | grep -vx "$3" | sort)
    count=$(echo "$pins" | wc -l)
    echo "a consumer of $product ($1) resolves $count packages besides AlamofireNIO:"
    echo "$pins" | sed 's/^/  /'
    forbidden=$(echo "$pins" | grep -E '^(hummingbird|hummingbird-websocket|swift-websocket|swift-configuration|async-http-client|httpbinserver|swift-docc-plugin|swift-docc-symbolkit|swift-argument-parser|swift-distributed-tracing|swift-metrics|swift-service-context|opencombine|swift-openapi-runtime)$' || true)
    if [ -n "$forbidden" ]; then
        echo "error: a consumer resolves development-only packages: $forbidden"
        exit 1
    fi
    if [ "$count" -gt "$limit" ]; then
        echo "error: a consumer resolves $count packages besides AlamofireNIO, more than $limit"
        exit 1
    fi
}

identity=$(basename "$root" | tr '[:upper:]' '[:lower:]')
check "by path" ".package(path: \"$root\")" "$identity"
# The product that presents AlamofireNIO as the module Alamofire needs nothing more.
check "the Alamofire product, by path" ".package(path: \"$root\")" "$identity" Alamofire
revision=$(git -C "$root" rev-parse HEAD)
check "by URL at $revision" ".package(url: \"file://$root\", revision: \"$revision\")" "$identity"
# With every integration's trait on, the integrations' own packages come in.
traits="$scratch/traits"
mkdir -p "$traits/Sources/Consumer"
cat >"$traits/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription
let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$root", traits: ["Tracing", "Metrics", "Combine", "OpenAPI"])],
    targets: [
        .target(name: "Consumer", dependencies: [
            .product(name: "AlamofireNIOTracing", package: "$identity"),
            .product(name: "AlamofireNIOMetrics", package: "$identity"),
            .product(name: "AlamofireNIOCombine", package: "$identity"),
            .product(name: "AlamofireNIOOpenAPI", package: "$identity"),
        ])
    ]
)
MANIFEST
echo 'import AlamofireNIOTracing' >"$traits/Sources/Consumer/Consumer.swift"
if ! (cd "$traits" && swift package resolve >"$traits/resolve.log" 2>&1); then
    cat "$traits/resolve.log"
    echo "error: a consumer enabling the integrations' traits does not resolve"
    exit 1
fi
extra=$(grep -o '"identity" : "[^"]*"' "$traits/Package.resolved" | sed 's/.*: "\(.*\)"/\1/' | grep -vx "$identity" | sort)

echo "with the Tracing, Metrics, Combine and OpenAPI traits a consumer resolves $(echo "$extra" | wc -l) packages besides AlamofireNIO"
for expected in swift-distributed-tracing swift-metrics opencombine swift-openapi-runtime; do
    if ! echo "$extra" | grep -qx "$expected"; then
        echo "error: enabling the integrations' traits did not resolve $expected"
        exit 1
    fi
done
