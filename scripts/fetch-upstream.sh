#!/usr/bin/env bash
# Fetch the pinned upstream Go modules of every emulated Kubeflow Trainer release
# (each with the modules of its own go.mod) and record what trainc needs from them in
# its cache, one folder per release:
#
#   $CACHE/upstream/<version>/manifest.json  {"trainerVersion", "trainerDir", "modules",
#                                             "outputCrds", "inputsSha256"}
#   $CACHE/upstream/<version>/typeinfo.json  Go JSON field facts (upstream/typeinfo)
#
# The module list of the newest release is upstream/go.mod; an older release's is
# upstream/versions/<version>.mod (used with `go -modfile`), so the typeinfo program
# is compiled against that release's own types. The releases are TRAINER_VERSIONS in
# compiler/upstream/versions.py; pass versions as arguments to fetch only those.
#
# $CACHE is computed like compiler/upstream/artifacts.py cache_root():
# $TRAINC_CACHE, else $XDG_CACHE_HOME/trainc, else ~/.cache/trainc.
# "outputCrds" maps CRD names to the CRD files of the rendered kinds, in the module
# cache (`trainc check` validates outputs against them): JobSet from sigs.k8s.io/jobset,
# the coscheduling PodGroup from sigs.k8s.io/scheduler-plugins. volcano.sh/apis ships
# no CRD YAML, so Volcano's PodGroup is not listed.
# Idempotent: when the manifest records the same inputs hash (the module list and its
# sums, the typeinfo program and this script) and its files are present, it does nothing.
set -euo pipefail

TRAINER_MODULE=github.com/kubeflow/trainer/v2
NEWEST_VERSION=v2.3.0
ALL_VERSIONS=(v2.0.0 v2.1.0 v2.2.0 v2.3.0)
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT="$REPO_ROOT/scripts/$(basename "${BASH_SOURCE[0]}")"
UPSTREAM_DIR="$REPO_ROOT/upstream"
CACHE="${TRAINC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainc}"

die() {
    echo "fetch-upstream: $*" >&2
    exit 1
}

command -v go >/dev/null 2>&1 ||
    die "the Go toolchain ('go') is not on PATH; install Go >= 1.26 and re-run 'make upstream'"

fetch_version() {
    local TRAINER_VERSION="$1" MODFILE=go.mod
    [[ "$TRAINER_VERSION" == "$NEWEST_VERSION" ]] || MODFILE="versions/$TRAINER_VERSION.mod"
    [[ -f "$UPSTREAM_DIR/$MODFILE" ]] || die "no module list for Trainer $TRAINER_VERSION (upstream/$MODFILE)"
    local OUT_DIR="$CACHE/upstream/$TRAINER_VERSION"
    local MANIFEST="$OUT_DIR/manifest.json" TYPEINFO="$OUT_DIR/typeinfo.json"
    local inputs_sha trainer_dir trainer_version jobset_crd podgroup_crd tmp log modules_json
    inputs_sha="$(cat "$UPSTREAM_DIR/$MODFILE" "$UPSTREAM_DIR/${MODFILE%.mod}.sum" "$UPSTREAM_DIR/typeinfo/main.go" \
        "$SCRIPT" | sha256sum | cut -d' ' -f1)"

    # Fast path: nothing changed since the last run.
    if [[ -f "$MANIFEST" && -s "$TYPEINFO" ]] && grep -q "\"inputsSha256\": \"$inputs_sha\"" "$MANIFEST"; then
        trainer_dir="$(sed -n 's/.*"trainerDir": "\(.*\)".*/\1/p' "$MANIFEST")"
        if [[ -d "$trainer_dir/manifests" ]]; then
            echo "upstream: Trainer $TRAINER_VERSION artifacts up to date in $OUT_DIR"
            return 0
        fi
    fi

    cd "$UPSTREAM_DIR"
    if ! log="$(go mod download -modfile="$MODFILE" 2>&1)"; then
        echo "$log" >&2
        die "'go mod download' failed in $UPSTREAM_DIR (network or module proxy unavailable?)"
    fi
    trainer_dir="$(go list -modfile="$MODFILE" -m -f '{{.Dir}}' "$TRAINER_MODULE")"
    [[ -d "$trainer_dir/manifests" ]] || die "Trainer module directory $trainer_dir has no manifests/"
    trainer_version="$(go list -modfile="$MODFILE" -m -f '{{.Version}}' "$TRAINER_MODULE")"
    [[ "$trainer_version" == "$TRAINER_VERSION" ]] ||
        die "upstream/$MODFILE resolves $TRAINER_MODULE to $trainer_version, expected $TRAINER_VERSION"

    # CRDs of the rendered kinds, as shipped by their modules.
    jobset_crd="$(go list -modfile="$MODFILE" -m -f '{{.Dir}}' sigs.k8s.io/jobset)/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"
    podgroup_crd="$(go list -modfile="$MODFILE" -m -f '{{.Dir}}' sigs.k8s.io/scheduler-plugins)/config/crd/bases/scheduling.x-k8s.io_podgroups.yaml"
    for crd in "$jobset_crd" "$podgroup_crd"; do
        [[ -f "$crd" ]] || die "CRD file $crd is missing from the module cache"
    done

    mkdir -p "$OUT_DIR"
    tmp="$(mktemp -d "$OUT_DIR/.tmp.XXXXXX")"

    if ! log="$(go run -modfile="$MODFILE" ./typeinfo 2>&1 >"$tmp/typeinfo.json")"; then
        echo "$log" >&2
        die "the typeinfo program (upstream/typeinfo) failed"
    fi

    # Versions of the modules whose types or files trainc reads.
    modules_json="$(go list -modfile="$MODFILE" -m -f '    "{{.Path}}": "{{.Version}}"' \
        "$TRAINER_MODULE" k8s.io/api k8s.io/apimachinery sigs.k8s.io/jobset \
        sigs.k8s.io/scheduler-plugins volcano.sh/apis | paste -sd, - | sed 's/,/,\n/g')"
    cat >"$tmp/manifest.json" <<EOF
{
  "trainerVersion": "$TRAINER_VERSION",
  "trainerDir": "$trainer_dir",
  "modules": {
$modules_json
  },
  "outputCrds": {
    "jobsets.jobset.x-k8s.io": "$jobset_crd",
    "podgroups.scheduling.x-k8s.io": "$podgroup_crd"
  },
  "inputsSha256": "$inputs_sha"
}
EOF

    mv -f "$tmp/typeinfo.json" "$TYPEINFO"
    mv -f "$tmp/manifest.json" "$MANIFEST"
    rm -rf "$tmp"
    echo "upstream: Trainer $TRAINER_VERSION artifacts written to $OUT_DIR"
}

versions=("$@")
[[ ${#versions[@]} -gt 0 ]] || versions=("${ALL_VERSIONS[@]}")
for version in "${versions[@]}"; do
    fetch_version "$version"
done
