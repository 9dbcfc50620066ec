#!/usr/bin/env bash
# Resolves a tiny package that depends on this checkout and uses only the `AlamofireNIO` product,
# and fails if it resolves more than the library's own dependencies need: at most 17 packages, and
# none of the development server's (Hummingbird and what it pulls in) or the benchmarks'.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
limit=17
consumer=$(mktemp -d)
trap 'rm -rf "$consumer"' EXIT
mkdir -p "$consumer/Sources/Consumer"
cat >"$consumer/Package.swift" <<MANIFEST
// swift-tools-version:6.2
import PackageDescription
let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$root")],
    targets: [
        .target(name: "Consumer", dependencies: [.product(name: "AlamofireNIO", package: "$(basename "$root")")])
    ]
)
MANIFEST
echo 'import AlamofireNIO' >"$consumer/Sources/Consumer/Consumer.swift"
(cd "$consumer" && swift package resolve >/dev/null 2>&1) || { echo "error: the consumer package does not resolve"; exit 1; }
pins=$(grep -o '"identity" : "[^"]*"' "$consumer/Package.resolved" | sed 's/.*: "\(.*\)"/\1/' | sort)
count=$(echo "$pins" | wc -l)
echo "a consumer of AlamofireNIO resolves $count packages (the checkout itself is not pinned):"
echo "$pins" | sed 's/^/  /'
forbidden=$(echo "$pins" | grep -E '^(hummingbird|hummingbird-websocket|swift-websocket|swift-configuration|async-http-client|httpbinserver|swift-docc-plugin)$' || true)
if [ -n "$forbidden" ]; then
    echo "error: a consumer resolves development-only packages: $forbidden"
    exit 1
fi
if [ "$count" -gt "$limit" ]; then
    echo "error: a consumer resolves $count packages, more than $limit"
    exit 1
fi
