#!/usr/bin/env bash
# What CI leaves out to stay within its time, run before every stop (each step builds in a folder of
# its own, so allow an hour on 2 cores): the instruction budget (W1, W2 and W9 under callgrind),
# ThreadSanitizer and AddressSanitizer over every suite but the memory soaks, then every fuzz target
# for SECONDS (default 30) from its committed corpus.
#
#   Scripts/before-stop.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
started=$SECONDS
step() { printf '== [%d:%02d] %s\n' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)) "$1"; }
step "instruction budget (fails 3% above Benchmarks/InstructionBudget.json)"
Scripts/check-instruction-budget.sh
step "ThreadSanitizer, every suite"
Scripts/sanitize.sh thread all
step "AddressSanitizer, every suite"
Scripts/sanitize.sh address all
step "fuzzing, ${seconds} s a target"
Scripts/fuzz.sh "$seconds"
step "done"
