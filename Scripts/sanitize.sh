#!/usr/bin/env bash
# Builds the package and its tests with a sanitizer and runs every test but the memory soaks under
# it, one at a time, in three groups; fails on any sanitizer report or crash, and on a test that
# fails under it twice (a failing test is run again alone: the sanitizer's slowdown can starve one
# whose wait has a wall-clock limit).
# `Scripts/sanitize.sh thread`: ThreadSanitizer, with the suppressions in Tests/tsan.supp.
# `Scripts/sanitize.sh address`: AddressSanitizer (leaks are the fuzzers' to find).
# A second argument says which groups: `core`, the first (the loading and transport suites, where
# the event loops, locks and state machines are), as CI runs it to stay within its time; `library`,
# the first two (the library's suites too); `all` (the default), the third too: the test server's,
# integrations', tools' and Swift 5 mode suites. `Scripts/before-stop.sh` runs `all`.
# Each sanitizer builds in a scratch directory of its own (.build-tsan, .build-asan).
#
# MemorySoakTests are left out: they measure resident memory, which a sanitizer's shadow memory
# multiplies, and the C allocator's bytes in use, which a sanitizer's own allocator does not report;
# and their child processes run long under it.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:?usage: Scripts/sanitize.sh thread|address [all|library|core]}
case "$sanitizer" in
    thread) scratch=.build-tsan; export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 suppressions=$PWD/Tests/tsan.supp" ;;
    # Leaks are the fuzzers' to find (Foundation's and Dispatch's own lasting allocations would be
    # reported here); a small quarantine keeps the 1 GiB transfers' memory limits meaningful.
    address) scratch=.build-asan; export ASAN_OPTIONS="detect_leaks=0:quarantine_size_mb=16" ;;
    *) echo "usage: Scripts/sanitize.sh thread|address [all|library|core]" >&2; exit 2 ;;
esac
suites=${2:-all}
case "$suites" in
    all|library|core) ;;
    *) echo "usage: Scripts/sanitize.sh thread|address [all|library|core]" >&2; exit 2 ;;
esac
# The core suites need none of the traits: without them the integrations' packages are not built.
traits=(--enable-all-traits)
[ "$suites" != core ] || traits=()
swift build --build-tests "${traits[@]}" --sanitize="$sanitizer" --scratch-path "$scratch"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Tests run one at a time, in one test process per group: run in parallel, slowed 5 to 15 times on
# 2 cores, they starve each other's event loops past their own time limits (a WebSocket's 5 s close,
# a 20 s wait).
status=0
run() {
    swift test --skip-build "${traits[@]}" --sanitize="$sanitizer" --scratch-path "$scratch" --no-parallel "$@" 2>&1 \
        | tee -a "$log" || status=1
}
run --filter "AlamofireNIOLoadingTests|AlamofireNIOTransportTests"
[ "$suites" = core ] || run --filter "AlamofireNIOTests" --skip MemorySoakTests
[ "$suites" != all ] || run --skip "AlamofireNIOTests|AlamofireNIOLoadingTests|AlamofireNIOTransportTests"
report_pattern="WARNING: ThreadSanitizer|ERROR: AddressSanitizer|ERROR: ThreadSanitizer"
crash_pattern="Fatal error:|CHECK failed|[Ee]xited with unexpected signal"
reports=$(grep -cE "$report_pattern" "$log" || true)
crashes=$(grep -cE "$crash_pattern" "$log" || true)
if [ "$reports" -gt 0 ] || [ "$crashes" -gt 0 ]; then
    echo "error: $reports sanitizer report(s), $crashes crash(es)"
    exit 1
fi
if [ "$status" -ne 0 ]; then
    # A test that fails under the sanitizer's slowdown is run again, alone; one that fails twice
    # fails the run (an ordinary failure, or a timing dependence worth fixing).
    failed=$(grep -E "^✘ Test [A-Za-z0-9_]+\(" "$log" | sed -E 's/^✘ Test ([A-Za-z0-9_]+)\(.*/\1/' | sort -u || true)
    if [ -z "$failed" ]; then
        echo "error: a test process failed without naming a test"
        exit 1
    fi
    echo "tests that failed under the sanitizer, run again alone:"
    echo "$failed" | sed 's/^/  /'
    : > "$log"
    status=0
    # Each name is matched as a whole test function's (`/name(`), so one name's prefix of another's
    # runs nothing extra; the memory soaks stay out whatever they share a name with.
    run --filter "/($(echo "$failed" | paste -sd '|' -))\\(" --skip MemorySoakTests
    reports=$(grep -cE "$report_pattern|$crash_pattern" "$log" || true)
    if [ "$status" -ne 0 ] || [ "$reports" -gt 0 ]; then
        echo "error: tests failed under the $sanitizer sanitizer twice (or reported on the second run)"
        exit 1
    fi
fi
echo "no $sanitizer sanitizer report"
