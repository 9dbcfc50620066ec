#!/usr/bin/env bash
# Counts AlamofireNIO's instructions and allocations per request on W1 (sequential GETs), W2 (64 in
# flight) and W9 (100 in flight over HTTP/2 and TLS) under callgrind, against nginx, and fails when
# any rises more than the tolerance in Benchmarks/InstructionBudget.json above its budget. The benchmark installs nginx-light and valgrind
# from Debian when they are missing. About 8 minutes from scratch on 2 cores (the release build),
# a minute to count.
#
# A rise that is worth it: record the new counts (`bench --budget InstructionBudget.json --record`)
# and say why, with the file's note, in the commit that changes it.
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
swift build -c release --product bench
.build/release/bench --budget InstructionBudget.json
