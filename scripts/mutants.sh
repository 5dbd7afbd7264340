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
#
# Mutants are built in a copy of the tree (the first build of a scope there is a cold one);
# MUTANTS_IN_PLACE=1 mutates this tree instead, reusing its build, and must not be combined
# with editing it. Results go to target/mutants/<scope>/mutants.out (missed.txt, caught.txt).
# Exits 1 when a scope missed a mutant.
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
      --file src/auth/limiter.rs --file src/auth/session.rs --file src/auth/operator.rs ;;
    crypto) echo -p meldewerk --cargo-arg=--lib --file src/crypto.rs ;;
    certificates) echo -p meldewerk-storage --cargo-arg=--test=certificates \
      --file storage/src/certificates.rs --file storage/src/sled_store/certificates.rs ;;
    *) return 1 ;;
  esac
}
SCOPES=(auth crypto certificates)

if [ "${1:-}" = --list ]; then
  for name in "${SCOPES[@]}"; do
    # shellcheck disable=SC2046 # the scope's arguments are words
    echo "$name: $(cargo mutants --list $(scope "$name") | wc -l) mutants"
  done
  exit 0
fi

selected=("$@")
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
  # The unmutated tree is checked first (a failing baseline stops the scope); a mutant whose
  # tests run past 60 s (a loop that no longer ends) counts as caught by its timeout.
  # shellcheck disable=SC2086 # the scope's arguments are words
  cargo mutants "${where[@]}" --no-shuffle --timeout 60 --build-timeout 900 \
    -o "target/mutants/$name" $args || status=1
done
exit "$status"
