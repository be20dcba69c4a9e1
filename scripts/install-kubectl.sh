#!/usr/bin/env bash
# Make `kubectl kustomize` (or the equivalent standalone `kustomize build`) available
# for tests/conformance/test_kustomize_differential.py.
#
# kubectl itself is not `go install`-able (its main package lives in the
# k8s.io/kubernetes module, whose go.mod uses replace directives), so when kubectl is
# missing this installs the standalone kustomize CLI at the version kubectl v1.32
# embeds (kustomize v5.5.0) with `go install`, into $TRAINC_CACHE/bin. The test uses
# kubectl when present, else that binary, else skips with the reason.
set -euo pipefail

KUSTOMIZE_MODULE=sigs.k8s.io/kustomize/kustomize/v5
KUSTOMIZE_VERSION=v5.5.0
CACHE="${TRAINC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainc}"
BIN_DIR="$CACHE/bin"

if command -v kubectl >/dev/null 2>&1; then
    echo "kustomize: using $(command -v kubectl) ($(kubectl version --client 2>/dev/null | tr '\n' ' '))"
    exit 0
fi
if [[ -x "$BIN_DIR/kustomize" ]] && [[ "$("$BIN_DIR/kustomize" version 2>/dev/null)" == *"$KUSTOMIZE_VERSION"* ]]; then
    echo "kustomize: $KUSTOMIZE_VERSION up to date in $BIN_DIR"
    exit 0
fi
command -v go >/dev/null 2>&1 || {
    echo "install-kubectl: neither kubectl nor go is on PATH; the kustomize differential test will skip" >&2
    exit 0
}
mkdir -p "$BIN_DIR"
GOBIN="$BIN_DIR" go install "$KUSTOMIZE_MODULE@$KUSTOMIZE_VERSION"
echo "kustomize: installed $KUSTOMIZE_VERSION into $BIN_DIR"
