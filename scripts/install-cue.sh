#!/usr/bin/env bash
# Install the pinned cue CLI (CUE policies are checked with it) into trainc's cache:
#
#   $CACHE/cue/<version>/cue
#
# $CACHE is computed like compiler/upstream/artifacts.py cache_root():
# $TRAINC_CACHE, else $XDG_CACHE_HOME/trainc, else ~/.cache/trainc.
# The version is compiler/policy/cue.py CUE_VERSION (a test checks they agree).
# Idempotent: when the binary is there and reports the pinned version, it does nothing.
set -euo pipefail

CUE_VERSION=v0.17.1
CACHE="${TRAINC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainc}"
BIN_DIR="$CACHE/cue/$CUE_VERSION"
CUE="$BIN_DIR/cue"

die() {
    echo "install-cue: $*" >&2
    exit 1
}

# Whether $1 reports the pinned version. Its whole output is read first, then matched:
# a pipe into `head`/`grep -q` closes early, and under pipefail the writer's SIGPIPE
# made this check fail at random.
reports_pinned_version() {
    local out
    out="$("$1" version 2>/dev/null)" || return 1
    [[ "${out%%$'\n'*}" == "cue version $CUE_VERSION" ]]
}

if [[ -x "$CUE" ]] && reports_pinned_version "$CUE"; then
    echo "cue: $CUE_VERSION up to date in $BIN_DIR"
    exit 0
fi

command -v go >/dev/null 2>&1 ||
    die "the Go toolchain ('go') is not on PATH; install Go and re-run 'make setup'"

mkdir -p "$BIN_DIR"
# Outside any module, so the project's go.mod files play no part.
cd "$(mktemp -d)"
trap 'rm -rf "$PWD"' EXIT
if ! log="$(GOBIN="$BIN_DIR" go install "cuelang.org/go/cmd/cue@$CUE_VERSION" 2>&1)"; then
    echo "$log" >&2
    die "'go install cuelang.org/go/cmd/cue@$CUE_VERSION' failed (network or module proxy unavailable?)"
fi
reports_pinned_version "$CUE" ||
    die "$CUE does not report version $CUE_VERSION"
echo "cue: $CUE_VERSION installed in $BIN_DIR"
