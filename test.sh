#!/usr/bin/env bash
# Runs every test of memlens: formatting, lints, the Rust tests (including
# real programs under the recorder, compared with heaptrack where it is
# installed), the web viewer's tests (typecheck, Vitest, end-to-end in
# headless Chromium) and a bounded fuzz run of the trace reader.
# Usage: ./test.sh            (what CI runs, through .ci/run)
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all -- --check

step "build (release, whole workspace: the CLI and the recorder library)"
cargo build --release --workspace --all-targets

step "lints"
cargo clippy --release --workspace --all-targets -- -D warnings

step "tests"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
cargo test --release --workspace --no-fail-fast -- --test-threads=2 2>&1 | tee "$results"

step "web viewer: typecheck, unit tests, end-to-end in headless Chromium"
web/test.sh

step "fuzz the trace reader (bounded)"
cargo run --release -p memlens-trace --example fuzz_reader -- 10000
if command -v cargo-fuzz >/dev/null 2>&1; then
    # Coverage-guided, seeded with a real trace; 45 s of fuzzing.
    mkdir -p fuzz/corpus/reader
    ./memlens record -q -o fuzz/corpus/reader/seed.mlens -f -- sh -c 'ls / >/dev/null'
    (cd fuzz && cargo fuzz run -s none reader -- -max_total_time=45 -max_len=100000)
fi

# One closing line for everything the Rust test runner counted.
passed=$(grep -Eo '[0-9]+ passed' "$results" | awk '{s += $1} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ failed' "$results" | awk '{s += $1} END {print s + 0}')
printf '\n%s passed, %s failed\n' "$passed" "$failed"
