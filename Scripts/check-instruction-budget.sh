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
# Without debug information: callgrind counts a stripped copy anyway (Debian 12's valgrind cannot read
# DWARF 5), so the code counted is the same (W1, W2 and W9 within 0.5% of the budget either way);
# from nothing on 2 cores the release build took 611 s so, against 677 s with it (2026-12-06).
# SwiftPM does not notice a file added to the library through the path dependency until the
# manifest changes: touching it makes the build see the library's files as they are.
touch Package.swift
swift build -c release --product bench -Xswiftc -gnone -Xcc -g0
.build/release/bench --budget InstructionBudget.json
