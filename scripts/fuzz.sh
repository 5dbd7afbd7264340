#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ (docs/testing.md, "Fuzzing") for FUZZ_SECONDS each
# (default 60; 0 skips), two at a time on CI's two cores. Needs a nightly toolchain and
# cargo-fuzz (installed here, pinned); without either it prints a note and skips. A crash or a
# target that does not build exits 1, naming the crashing input. Names of targets as arguments
# run only those: `scripts/fuzz.sh strict_json`. `--prepare` installs and builds only.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
CARGO_FUZZ_VERSION=0.13.1
if [ "$seconds" = 0 ]; then
  echo "fuzz: skipped (FUZZ_SECONDS=0)"
  exit 0
fi
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "fuzz: note: no nightly toolchain (rustup toolchain install nightly); fuzzing skipped"
  exit 0
fi
if ! cargo fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
  echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION"
  if ! cargo install --quiet --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"; then
    echo "fuzz: note: cargo-fuzz could not be installed; fuzzing skipped"
    exit 0
  fi
fi

prepare=""
if [ "${1:-}" = --prepare ]; then
  prepare=yes
  shift
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(memento form_post xjustiz_read strict_json)
# The dev profile without sanitizer: see fuzz/Cargo.toml and docs/testing.md for why.
flags=(--dev --sanitizer none)
echo "fuzz: building ${targets[*]}"
if ! cargo +nightly fuzz build "${flags[@]}"; then
  echo "fuzz: FAILED: the fuzz targets do not build" >&2
  exit 1
fi
if [ -n "$prepare" ]; then
  echo "fuzz: built"
  exit 0
fi

# The committed seeds of a target (the XJustiz reader's are the reader's own test fixtures).
seeds() {
  case "$1" in
    xjustiz_read) echo xml/tests/fixtures/xjustiz ;;
    *) echo "fuzz/seeds/$1" ;;
  esac
}

mkdir -p fuzz/artifacts
run() {
  local target=$1
  # Inputs found on the way go to fuzz/corpus (ignored by git), the seeds are only read.
  mkdir -p "fuzz/corpus/$target"
  cargo +nightly fuzz run "${flags[@]}" "$target" "fuzz/corpus/$target" "$(seeds "$target")" \
    -- -max_total_time="$seconds" -timeout=20 >"fuzz/artifacts/$target.log" 2>&1
}

failed=()
report() {
  local target=$1 status=$2
  if [ "$status" -eq 0 ]; then
    echo "fuzz: $target: no crash in ${seconds}s ($(grep -o 'Done [0-9]* runs' "fuzz/artifacts/$target.log" | tail -1))"
  else
    failed+=("$target")
    echo "fuzz: $target FAILED; the end of fuzz/artifacts/$target.log:" >&2
    grep -E -A1 "panicked at" "fuzz/artifacts/$target.log" >&2
    grep -E "Test unit written to" "fuzz/artifacts/$target.log" >&2
    tail -n 25 "fuzz/artifacts/$target.log" >&2
  fi
}

# Two targets at once, one per core.
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  first=${targets[i]}
  second=${targets[i + 1]:-}
  run "$first" &
  first_pid=$!
  if [ -n "$second" ]; then
    run "$second" &
    second_pid=$!
  fi
  wait "$first_pid"
  report "$first" $?
  if [ -n "$second" ]; then
    wait "$second_pid"
    report "$second" $?
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (reproduce with: cargo +nightly fuzz run --dev --sanitizer none TARGET fuzz/artifacts/TARGET/crash-…)" >&2
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash"
