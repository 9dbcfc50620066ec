#!/usr/bin/env bash
# The tests, every trait on (so the integrations are tested too), in two test processes: the
# transport's suites first, then the rest. In one process on a 2-core machine, the transport's load
# and timing tests starve the others' paced downloads and streams past their own limits (their
# 10 to 30 s waits), so they run apart. Both groups run whatever the first's outcome; the script
# fails if either does. Extra arguments (`--skip X`, say) go to both runs; a `--filter` adds to the
# first group's rather than narrowing it, so to run one suite use `swift test --filter` itself.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests --enable-all-traits
status=0
swift test --skip-build --enable-all-traits --filter AlamofireNIOTransportTests "$@" || status=1
swift test --skip-build --enable-all-traits --skip AlamofireNIOTransportTests "$@" || status=1
exit "$status"
