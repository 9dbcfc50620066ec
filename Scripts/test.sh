#!/usr/bin/env bash
# The tests, every trait on (so the integrations are tested too), in two test processes: the
# transport's suites first, then the rest. In one process on a 2-core machine, the transport's load
# and timing tests starve the others' paced downloads and streams past their own limits (their
# 10 to 30 s waits), so they run apart. Extra arguments go to both `swift test` runs.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests --enable-all-traits
swift test --skip-build --enable-all-traits --filter AlamofireNIOTransportTests "$@"
swift test --skip-build --enable-all-traits --skip AlamofireNIOTransportTests "$@"
