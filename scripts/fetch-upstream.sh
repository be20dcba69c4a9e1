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
#
# Kueue (compiler/upstream/versions.py KUEUE_VERSION) is fetched too, as one module zip
# checked against the h1 sum pinned below, into its own folder:
#
#   $CACHE/upstream/kueue/<version>/manifest.json  {"kueueVersion", "kueueDir", "sum",
#                                                   "trainerVersion", "jobsetVersion",
#                                                   "inputCrds", "inputsSha256"}
#
# "inputCrds" maps CRD names to the CRD files of the Kueue kinds trainc reads as inputs
# (ResourceFlavor, ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass, Workload), in
# the module cache; "trainerVersion" is the Trainer release that Kueue release embeds (its
# go.mod's github.com/kubeflow/trainer/v2), which computes its TrainJob Workloads. Pass
# `kueue` as an argument to fetch only Kueue; no arguments fetch every release and Kueue.
# The same idempotence rule holds (inputs: the pin and this script).
#
# Katib (compiler/upstream/versions.py KATIB_VERSION) is fetched the same way, as one
# module zip checked against its pinned h1 sum, into its own folder:
#
#   $CACHE/upstream/katib/<version>/manifest.json  {"katibVersion", "katibDir", "sum",
#                                                   "inputCrds", "katibConfig",
#                                                   "inputsSha256"}
#
# "inputCrds" maps experiments.kubeflow.org to the Experiment CRD file in the module
# cache; "katibConfig" is the release's standalone katib-config.yaml (the algorithms,
# early stoppings and metrics collectors its webhook accepts). Pass `katib` to fetch only
# Katib; no arguments fetch every release, Kueue and Katib.
set -euo pipefail

TRAINER_MODULE=github.com/kubeflow/trainer/v2
NEWEST_VERSION=v2.3.0
ALL_VERSIONS=(v2.0.0 v2.1.0 v2.2.0 v2.3.0)
KUEUE_MODULE=sigs.k8s.io/kueue
KUEUE_VERSION=v0.17.0
KUEUE_SUM="h1:7hzb38M4eKGzYW+CFv2s1L+swzzacUCHOCXxZmAV90I="
KUEUE_CRDS=(resourceflavors clusterqueues cohorts localqueues workloadpriorityclasses workloads)
KATIB_MODULE=github.com/kubeflow/katib
KATIB_VERSION=v0.19.0
KATIB_SUM="h1:uexj303nRkGtTFtTkY4McCt6J0TCtnerX3i3E7TRA5M="
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

# The version of module "$2" the go.mod file "$1" requires (empty when none).
required_version() {
    sed -n "s|^[[:space:]]*$2 \(v[^ ]*\).*|\1|p" "$1" | head -n1
}

# Fetch the pinned module "$3"@"$4" (named "$1" in messages) as one zip, check it
# against its pinned h1 sum "$5", and write $CACHE/upstream/$2/<version>/manifest.json
# with what the function "$7" prints when given the module's folder, its sum and the
# inputs hash (it dies, before anything is written, when a file is missing). Does
# nothing when the manifest records the same inputs (the pin and this script) and the
# folder it names as "$6" still has its go.mod.
fetch_pinned() {
    local name="$1" folder="$2" module="$3" version="$4" pinned="$5" dir_key="$6" describe="$7"
    local out_dir="$CACHE/upstream/$folder/$version"
    local manifest="$out_dir/manifest.json"
    local inputs_sha info module_dir sum body work tmp
    inputs_sha="$(printf '%s %s %s\n' "$module" "$version" "$pinned" |
        cat - "$SCRIPT" | sha256sum | cut -d' ' -f1)"

    # Fast path: nothing changed since the last run.
    if [[ -f "$manifest" ]] && grep -q "\"inputsSha256\": \"$inputs_sha\"" "$manifest"; then
        module_dir="$(sed -n "s/.*\"$dir_key\": \"\(.*\)\".*/\1/p" "$manifest")"
        if [[ -f "$module_dir/go.mod" ]]; then
            echo "upstream: $name $version artifacts up to date in $out_dir"
            return 0
        fi
    fi

    # Outside any module, `go mod download MODULE@VERSION` fetches that zip alone.
    work="$(mktemp -d)"
    if ! info="$(cd "$work" && go mod download -json "$module@$version" 2>&1)"; then
        rm -rf "$work"
        echo "$info" >&2
        die "'go mod download $module@$version' failed (network or module proxy unavailable?)"
    fi
    rm -rf "$work"
    module_dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p' <<<"$info")"
    sum="$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",*$/\1/p' <<<"$info")"
    [[ "$sum" == "$pinned" ]] || die "$module@$version has sum $sum, pinned $pinned"
    [[ -f "$module_dir/go.mod" ]] || die "the $name module directory $module_dir has no go.mod"
    body="$("$describe" "$module_dir" "$sum" "$inputs_sha")"

    mkdir -p "$out_dir"
    tmp="$(mktemp "$out_dir/.manifest.XXXXXX")"
    printf '%s\n' "$body" >"$tmp"
    mv -f "$tmp" "$manifest"
    echo "upstream: $name $version artifacts written to $out_dir"
}

# Kueue's manifest, given its module folder, sum and inputs hash; "trainerVersion" is
# the Trainer release its go.mod requires.
kueue_manifest() {
    local kueue_dir="$1" sum="$2" inputs_sha="$3" trainer_version jobset_version crd file crds_json
    trainer_version="$(required_version "$kueue_dir/go.mod" "$TRAINER_MODULE")"
    jobset_version="$(required_version "$kueue_dir/go.mod" sigs.k8s.io/jobset)"
    [[ -n "$trainer_version" ]] || die "Kueue $KUEUE_VERSION's go.mod requires no $TRAINER_MODULE"

    crds_json=""
    for crd in "${KUEUE_CRDS[@]}"; do
        file="$kueue_dir/config/components/crd/bases/kueue.x-k8s.io_$crd.yaml"
        [[ -f "$file" ]] || die "CRD file $file is missing from the module cache"
        crds_json+="${crds_json:+,$'\n'}    \"$crd.kueue.x-k8s.io\": \"$file\""
    done
    cat <<EOF
{
  "kueueVersion": "$KUEUE_VERSION",
  "kueueDir": "$kueue_dir",
  "sum": "$sum",
  "trainerVersion": "$trainer_version",
  "jobsetVersion": "$jobset_version",
  "inputCrds": {
$crds_json
  },
  "inputsSha256": "$inputs_sha"
}
EOF
}

# Katib's manifest, given its module folder, sum and inputs hash.
katib_manifest() {
    local katib_dir="$1" sum="$2" inputs_sha="$3" crd_file config_file
    crd_file="$katib_dir/manifests/v1beta1/components/crd/experiment.yaml"
    config_file="$katib_dir/manifests/v1beta1/installs/katib-standalone/katib-config.yaml"
    [[ -f "$crd_file" ]] || die "CRD file $crd_file is missing from the module cache"
    [[ -f "$config_file" ]] || die "$config_file is missing from the module cache"
    cat <<EOF
{
  "katibVersion": "$KATIB_VERSION",
  "katibDir": "$katib_dir",
  "sum": "$sum",
  "inputCrds": {
    "experiments.kubeflow.org": "$crd_file"
  },
  "katibConfig": "$config_file",
  "inputsSha256": "$inputs_sha"
}
EOF
}

fetch_kueue() {
    fetch_pinned Kueue kueue "$KUEUE_MODULE" "$KUEUE_VERSION" "$KUEUE_SUM" kueueDir kueue_manifest
}

fetch_katib() {
    fetch_pinned Katib katib "$KATIB_MODULE" "$KATIB_VERSION" "$KATIB_SUM" katibDir katib_manifest
}

# Arguments: Trainer releases, `kueue` and/or `katib`; none: every release, Kueue, Katib.
versions=()
fetch_queue=1
fetch_hpo=1
if [[ $# -gt 0 ]]; then
    fetch_queue=0
    fetch_hpo=0
    for arg in "$@"; do
        case "$arg" in
            kueue) fetch_queue=1 ;;
            katib) fetch_hpo=1 ;;
            *) versions+=("$arg") ;;
        esac
    done
else
    versions=("${ALL_VERSIONS[@]}")
fi
for version in ${versions[@]+"${versions[@]}"}; do
    fetch_version "$version"
done
[[ $fetch_queue -eq 0 ]] || fetch_kueue
[[ $fetch_hpo -eq 0 ]] || fetch_katib
