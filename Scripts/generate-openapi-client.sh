#!/usr/bin/env bash
# Regenerates the OpenAPI transport tests' client from Tests/IntegrationTests/OpenAPI/openapi.yaml
# with swift-openapi-generator (built once in a scratch directory), and commits nothing: review and
# commit the output. Each file is wrapped in `#if OpenAPI`, as the test target builds without the
# runtime when the trait is off, and marked for swift-format to leave alone.
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.14.3
work=${OPENAPI_GENERATOR_DIR:-/tmp/swift-openapi-generator-$version}
if [ ! -x "$work/.build/debug/swift-openapi-generator" ]; then
    rm -rf "$work"
    git clone -q https://github.com/apple/swift-openapi-generator.git "$work"
    git -C "$work" checkout -q "$version"
    swift build --package-path "$work" --product swift-openapi-generator
fi
spec=Tests/IntegrationTests/OpenAPI
out=$(mktemp -d)
"$work/.build/debug/swift-openapi-generator" generate "$spec/openapi.yaml" \
    --config "$spec/openapi-generator-config.yaml" --output-directory "$out"
rm -rf "$spec/Generated" && mkdir -p "$spec/Generated"
for file in $(cd "$out" && ls *.swift); do
    {
        echo "// swift-format-ignore-file"
        echo "#if OpenAPI"
        cat "$out/$file"
        echo "#endif"
    } > "$spec/Generated/$file"
done
rm -rf "$out"
