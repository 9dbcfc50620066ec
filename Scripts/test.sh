#!/usr/bin/env bash
# The tests, every trait on (so the integrations are tested too), in one test process with at most
# 16 test functions running at once (SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH, read by Swift
# 6.3's swift-testing).
#
# swift-testing otherwise starts all of them at once (about 950). On a 2-core machine they then
# share the cores for the first half minute, each slowed by the others: a server takes seconds to
# start, and tests whose waits have a wall-clock limit (10 to 30 s for a paced download, a stream's
# demand, a publisher's completion) fail. With 16 at a time the whole run also ends sooner (about
# 270 s against 300 s). Extra arguments (`--filter X`, `--skip Y`) go to `swift test`.
#
# The tests get a temporary directory of their own (TMPDIR), removed afterwards: a download without
# a destination keeps its file there, as in Alamofire, and several tests leave one. Its `cache`
# folder is the tests' XDG_CACHE_HOME, where `URLCache.shared` keeps its disk: a run never answers
# a request from what an earlier run stored.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests --enable-all-traits
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/alamofire-nio-tests.XXXXXX")
export TMPDIR
export XDG_CACHE_HOME="$TMPDIR/cache"
trap 'rm -rf "$TMPDIR"' EXIT
# A backstop for a wait the tests' own deadlines miss (a thread blocked for good): the run fails
# after TEST_TIME_LIMIT (20 minutes; it takes 1.5 to 5) instead of hanging CI. `timeout` signals
# its whole process group, so the test process `swift test` starts ends with it. It runs in a group
# of its own, out of the terminal's reach: an interrupt is passed on to it. Where there is no
# `timeout` (macOS), the tests run without the backstop.
limit=()
if command -v timeout > /dev/null; then limit=(timeout --kill-after=30s "${TEST_TIME_LIMIT:-20m}"); fi
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-16} \
    "${limit[@]}" swift test --skip-build --enable-all-traits "$@" &
tests=$!
trap 'kill -INT "$tests" 2> /dev/null || true' INT
trap 'kill -TERM "$tests" 2> /dev/null || true' TERM
status=0
# `wait` also returns when a signal interrupts it; the tests' own status comes once they have ended.
while true; do
    status=0
    wait "$tests" || status=$?
    kill -0 "$tests" 2> /dev/null || break
done
exit "$status"
