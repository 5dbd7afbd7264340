#!/usr/bin/env bash
# Mutation testing of the security-critical code with cargo-mutants (installed here, pinned):
# each scope mutates its files one change at a time (a condition inverted, a result replaced,
# an operator swapped) and runs that scope's tests; a mutant the tests do not catch is a gap.
# docs/testing.md ("Mutation testing") lists the scopes, the last results and every surviving
# mutant shown equivalent. Not part of the test command: a scope takes from minutes to an hour.
#
#   scripts/mutants.sh                  every scope
#   scripts/mutants.sh auth crypto      only these
#   scripts/mutants.sh --list           the scopes and how many mutants each has
#   scripts/mutants.sh auth -- --iterate  cargo-mutants' own options after `--` (here: retest
#                                       only what the last run of the scope did not catch)
#
# Mutants are built in a copy of the tree (the first build of a scope there is a cold one);
# MUTANTS_IN_PLACE=1 mutates this tree instead, reusing its build, and must not be combined
# with editing it. Results go to target/mutants/<scope>/mutants.out (missed.txt, caught.txt).
# Exits 1 when a scope missed a mutant (the equivalent ones docs/testing.md argues count too).
set -uo pipefail
cd "$(dirname "$0")/.."

CARGO_MUTANTS_VERSION=27.1.0
if ! cargo mutants --version 2>/dev/null | grep -qF "$CARGO_MUTANTS_VERSION"; then
  echo "mutants: installing cargo-mutants $CARGO_MUTANTS_VERSION"
  cargo install --quiet --locked cargo-mutants --version "$CARGO_MUTANTS_VERSION" || exit 1
fi

# A scope: its package, the cargo arguments that pick its tests, and its files (with `--re` to
# take only some functions of a file). The tests are the unit tests beside the code where those
# catch every mutant; building the service's integration tests for each mutant would take
# minutes apiece.
scope() {
  case "$1" in
    auth) echo -p meldewerk --cargo-arg=--lib \
      --file src/tokens.rs --file src/auth/basic.rs --file src/auth/cache.rs \
      --file 'src/auth/limiter/*.rs' --file 'src/auth/session/*.rs' --file src/auth/operator.rs ;;
    crypto) echo -p meldewerk --cargo-arg=--lib --file src/crypto/mod.rs ;;
    # Report consume and peek: the store's transaction, then the API's reading of `peek` and
    # its answers (through the real server: api_contract; delivery for a refused report;
    # hospreport and hospreport_slow for the pending list of a module answering at once, while
    # a report is in delivery too; labreport_results for a module whose list names only
    # decided reports).
    results-store) echo -p meldewerk-storage --file storage/src/sled_store/store_impl.rs \
      --re "consume_report|report_result|report_status" ;;
    results-api) echo -p meldewerk --cargo-arg=--lib --cargo-arg=--test=api_contract \
      --cargo-arg=--test=delivery --cargo-arg=--test=hospreport \
      --cargo-arg=--test=hospreport_slow --cargo-arg=--test=labreport_results \
      --file src/module_layer/reports.rs ;;
    # The outbox's states: queued, attempted, rescheduled, delivered, failed, discarded.
    outbox) echo -p meldewerk-storage \
      --file storage/src/sled_store/queue.rs --file storage/src/sled_store/delivery.rs ;;
    archive) echo -p meldewerk-xml --cargo-arg=--lib --cargo-arg=--test=xjustiz_archive \
      --file xml/src/xjustiz/archive/names.rs --file xml/src/xjustiz/archive/mod.rs ;;
    certificates) echo -p meldewerk-storage \
      --file storage/src/certificates.rs --file storage/src/sled_store/certificates.rs ;;
    *) return 1 ;;
  esac
}
SCOPES=(auth crypto results-store results-api outbox archive certificates)

if [ "${1:-}" = --list ]; then
  for name in "${SCOPES[@]}"; do
    # shellcheck disable=SC2046 # the scope's arguments are words
    echo "$name: $(cargo mutants --list $(scope "$name") | wc -l) mutants"
  done
  exit 0
fi

selected=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  selected+=("$1")
  shift
done
[ "${1:-}" = -- ] && shift
[ ${#selected[@]} -eq 0 ] && selected=("${SCOPES[@]}")
where=()
[ -n "${MUTANTS_IN_PLACE:-}" ] && where=(--in-place)
status=0
for name in "${selected[@]}"; do
  if ! args=$(scope "$name"); then
    echo "mutants: no scope $name (scopes: ${SCOPES[*]})" >&2
    exit 2
  fi
  echo "mutants: $name"
  mkdir -p "target/mutants/$name"
  # The unmutated tree is checked first (a failing baseline stops the scope), and sets how
  # long a mutant's tests may run (several times the baseline's, at least 60 s): past that a
  # mutant (a loop that no longer ends) is reported as a timeout, its tests not passed.
  # shellcheck disable=SC2086 # the scope's arguments are words
  cargo mutants "${where[@]}" --no-shuffle --minimum-test-timeout 60 --build-timeout 900 \
    -o "target/mutants/$name" $args "$@" || status=1
done
exit "$status"
