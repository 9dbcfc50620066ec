#!/usr/bin/env bash
# Fuzzes every target of alamofire-fuzz with libFuzzer and AddressSanitizer for SECONDS each
# (default 30), starting from the committed corpus in Fuzzing/Corpus/<target>. New inputs go to a
# scratch corpus, not the committed one. Fails on the first crash, leak, timeout or out-of-memory;
# the input that caused it is kept in Fuzzing/Findings/ (add it to the corpus once fixed).
#
#   Scripts/fuzz.sh [SECONDS] [TARGET…]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds="${1:-30}"
shift || true

echo "== building alamofire-fuzz with -sanitize=fuzzer,address (.build-fuzz)"
log=$(mktemp)
if ! swift build --product alamofire-fuzz --scratch-path .build-fuzz --traits Brotli,Zstd \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld >"$log" 2>&1; then
    grep -E "error" "$log" | head -40
    echo "error: the fuzz build failed"
    exit 1
fi
grep -E "warning: .*Sources/|Build of product" "$log" || true
rm -f "$log"
binary=$(swift build --product alamofire-fuzz --scratch-path .build-fuzz --traits Brotli,Zstd --show-bin-path \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)/alamofire-fuzz
[ -x "$binary" ] || { echo "error: the fuzz build failed"; exit 1; }

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=($(ls Fuzzing/Corpus))
export LSAN_OPTIONS="suppressions=$root/Fuzzing/lsan.supp:print_suppressions=0"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p Fuzzing/Findings
for target in "${targets[@]}"; do
    echo "== $target: ${seconds} s"
    mkdir -p "$scratch/$target"
    # A leak is reported as a crash; -rss_limit_mb and -timeout catch unbounded memory and time.
    if ! "$binary" "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="Fuzzing/Findings/$target-" \
        "$scratch/$target" "Fuzzing/Corpus/$target" 2>"$scratch/$target.log"; then
        tail -40 "$scratch/$target.log"
        echo "error: $target failed; the input is in Fuzzing/Findings/"
        exit 1
    fi
    grep -E "stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb" "$scratch/$target.log" | tr -s " \n" " "
    echo
done
