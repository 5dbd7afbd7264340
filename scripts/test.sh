#!/usr/bin/env bash
# Runs meldewerk's whole test suite, after installing the outside tools the tests check our
# output with: xmllint (schemas), qpdf and pdftotext (receipt PDFs), chromium and chromedriver
# (tests/browser.rs drives the form in a real headless browser), PostgreSQL (the store's second
# engine, tested against a real server), Python's aiosmtpd, the real
# SMTP server tests/mail_alerts.rs receives alert mails with, Python's fhir.resources, whose
# R4B models parse every FHIR bundle fhir/tests/validate.rs generates, and Python's pyxjustiz,
# whose XJustiz 3.6.2 models parse every 0005005 xml/tests/xjustiz_pyxjustiz.rs writes and build
# the court messages it reads (xml/tests/pyxjustiz/), and schemathesis with
# openapi-spec-validator, which hold the service to its OpenAPI documents.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v xmllint >/dev/null 2>&1 || missing+=(libxml2-utils)
command -v qpdf >/dev/null 2>&1 || missing+=(qpdf)
command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium chromium-driver)
# The PostgreSQL engine's tests start throwaway clusters of their own (Debian keeps initdb in
# /usr/lib/postgresql/<version>/bin; the package also creates the postgres user they run as).
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Pinned; pip of the machine's python3 installs it for the user running the tests. A Debian
# python3 without pip (or one that refuses to install into the system) gets Debian's package.
if ! python3 -c 'import aiosmtpd' >/dev/null 2>&1; then
  echo "installing aiosmtpd==1.4.6"
  if ! python3 -m pip install --quiet --disable-pip-version-check aiosmtpd==1.4.6; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-aiosmtpd >/dev/null
  fi
fi

# Pinned like aiosmtpd; 7.1.0 has the R4B models the validator parses with. It comes from PyPI
# only; a Debian python3 that guards its system packages (PEP 668) is asked to allow it.
if ! python3 -c 'import fhir.resources.R4B' >/dev/null 2>&1; then
  echo "installing fhir.resources==7.1.0"
  python3 -m pip install --quiet --disable-pip-version-check fhir.resources==7.1.0 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
      fhir.resources==7.1.0
fi

# Pinned like fhir.resources: 1.1.0's models are generated from the XJustiz 3.6.2 schemas the
# tests validate against (its module is `xjustiz`); from PyPI only, like fhir.resources.
if ! python3 -c 'import xjustiz.model_gen.xjustiz_0005_nachrichten_3_2' >/dev/null 2>&1; then
  echo "installing pyxjustiz==1.1.0"
  python3 -m pip install --quiet --disable-pip-version-check pyxjustiz==1.1.0 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
      pyxjustiz==1.1.0
fi

# Pinned like the others: schemathesis checks the running service against its OpenAPI documents
# (tests/schemathesis.rs), openapi-spec-validator that those documents are valid OpenAPI 3.1
# (tests/api_docs.rs).
if ! python3 -c 'import schemathesis, openapi_spec_validator' >/dev/null 2>&1; then
  echo "installing schemathesis==4.32.5 openapi-spec-validator==0.7.1"
  python3 -m pip install --quiet --disable-pip-version-check schemathesis==4.32.5 \
      openapi-spec-validator==0.7.1 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages \
      schemathesis==4.32.5 openapi-spec-validator==0.7.1
fi

if [ ! -d ../shared/reference ]; then
  echo "error: the tests validate against ../shared/reference (schemas, samples); it is missing" >&2
  exit 1
fi

# A CI run builds once in a fresh clone: incremental caches would only take disk.
if [ -n "${CI:-}" ]; then
  export CARGO_INCREMENTAL=0
fi

# The whole suite (no arguments) ends with a short run of every fuzz target (scripts/fuzz.sh;
# FUZZ_SECONDS=0 skips it). Its build (cargo-fuzz and the targets, some 10 CPU
# minutes cold) runs at the lowest priority while the tests run: they mostly wait on servers,
# browsers and timers, and the build takes the cycles they leave.
fuzzing=""
if [ $# -eq 0 ] && [ "${FUZZ_SECONDS:-60}" != 0 ]; then
  fuzzing=yes
  cargo test --workspace --no-run --quiet
  mkdir -p target
  nice -n 19 scripts/fuzz.sh --prepare >target/fuzz-prepare.log 2>&1 &
  prepare=$!
fi

# Every test binary runs even after one fails, so that a run lists every failure at once.
status=0
cargo test --workspace --no-fail-fast "$@" || status=$?

if [ -n "$fuzzing" ]; then
  wait "$prepare" || true
  cat target/fuzz-prepare.log
  scripts/fuzz.sh || status=1
fi

# The whole suite also checks the formatting, as `cargo fmt` leaves it, including the module
# and transport folders `cargo fmt` does not reach: they are declared inside the `modules!` and
# `transports!` macros. A difference fails the run like a failed test.
# (rustup's stand-in answers `command -v rustfmt` even without the component, so ask for its
# version.) Both checks run, so that every unformatted file is listed.
if [ $# -eq 0 ]; then
  if ! rustfmt --version >/dev/null 2>&1 || ! cargo fmt --version >/dev/null 2>&1; then
    echo "warning: rustfmt is not installed; formatting not checked (rustup component add rustfmt)"
  else
    formatted=yes
    cargo fmt --all --check || formatted=""
    rustfmt --check src/modules/*/mod.rs transports/src/*/mod.rs || formatted=""
    if [ -z "$formatted" ]; then
      echo "error: not formatted as above; run: cargo fmt --all && rustfmt src/modules/*/mod.rs transports/src/*/mod.rs" >&2
      status=1
    fi
  fi
fi
exit "$status"
