#!/usr/bin/env bash
# Build the live control plane of trainc's tests (tests/live): etcd, kube-apiserver
# and the Kubeflow Trainer controller manager at pinned versions, from the Go module
# proxy, plus the Volcano PodGroup CRD generated with the controller-gen that Trainer
# pins. Everything goes into a cache outside the repository:
#
#   $CACHE/controlplane/<component>-<hash>/...   one folder per component, keyed by
#                                                 the sha256 of its inputs (its wrapper
#                                                 module in tests/live/modules/<component>/,
#                                                 this script, the Go version)
#   $CACHE/controlplane/manifest.json             where each binary and generated CRD is,
#                                                 and how long each cold build took
#
# $CACHE is computed like compiler/upstream/artifacts.py cache_root():
# $TRAINC_CACHE, else $XDG_CACHE_HOME/trainc, else ~/.cache/trainc.
#
# The wrapper modules (tests/live/modules/*/go.mod, go.sum, *.go) are ours;
# nothing downloaded is kept in the repository. A second run finds every component
# folder in place and does nothing.
#
# Components:
#   etcd            go.etcd.io/etcd/server/v3 v3.6.16, main calls etcdmain.Main
#   kube-apiserver  k8s.io/kubernetes v1.34.4; its go.mod points the k8s.io staging
#                   modules at ./staging/..., so the wrapper replaces each with its
#                   published v0.34.4 release; version ldflags make /version say v1.34.4
#   kube-controller-manager
#                   k8s.io/kubernetes v1.34.4 cmd/kube-controller-manager, the same
#                   staging replacements and version ldflags as kube-apiserver
#   jobset          sigs.k8s.io/jobset v0.12.0, the JobSet controller manager (its
#                   main package is the module root)
#   trainer         github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager v2.3.0
#   controller-gen  sigs.k8s.io/controller-tools v0.18.0 (Trainer v2.3.0's
#                   CONTROLLER_GEN_VERSION); run on volcano.sh/apis' scheduling/v1beta1
#                   types (at the version Trainer v2.3.0 requires) to generate
#                   scheduling.volcano.sh_podgroups.yaml: volcano.sh/apis ships no CRD YAML.
set -euo pipefail
shopt -s inherit_errexit

SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
REPO_ROOT="$(dirname "$(dirname "$SCRIPT")")"
MODULES="$REPO_ROOT/tests/live/modules"
CACHE="${TRAINC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainc}"
OUT="$CACHE/controlplane"
MANIFEST="$OUT/manifest.json"

KUBE_VERSION=v1.34.4
ETCD_VERSION=v3.6.16
TRAINER_VERSION=v2.3.0
JOBSET_VERSION=v0.12.0
CONTROLLER_GEN_VERSION=v0.18.0

die() {
    echo "build-control-plane: $*" >&2
    exit 1
}

command -v go >/dev/null 2>&1 ||
    die "the Go toolchain ('go') is not on PATH; install Go >= 1.26 and re-run 'make control-plane'"

export GOFLAGS="-mod=mod -buildvcs=false"
export CGO_ENABLED=0
go_version="$(go env GOVERSION)"
mkdir -p "$OUT"

# component_dir NAME [RECIPE...]: the cache folder of a component, keyed by the
# sha256 of its wrapper module's files, the Go version and how it is built (RECIPE).
component_dir() {
    local name="$1" sha
    shift
    sha="$(cd "$MODULES/$name" && { cat go.mod go.sum ./*.go; echo "$go_version" "$@"; } |
        sha256sum | cut -c1-16)"
    echo "$OUT/$name-$sha"
}

declare -A DIRS # component name -> its cache folder, set by build

# build NAME BINARY PACKAGE [LDFLAGS]: go build PACKAGE in the wrapper module NAME into
# the component folder, unless it is already there. Records the cold build seconds.
build() {
    local name="$1" binary="$2" package="$3" ldflags="${4:-}" dir start
    dir="$(component_dir "$name" "$binary" "$package" "$ldflags")"
    DIRS[$name]="$dir"
    if [[ -x "$dir/bin/$binary" ]]; then
        echo "control-plane: $binary up to date ($dir)"
        return
    fi
    echo "control-plane: building $binary (cold builds take minutes) ..."
    rm -rf "$dir.tmp"
    mkdir -p "$dir.tmp/bin"
    start="$(date +%s)"
    (cd "$MODULES/$name" && go build -trimpath -ldflags "-s -w $ldflags" -o "$dir.tmp/bin/$binary" "$package") ||
        die "building $binary failed"
    echo "$(($(date +%s) - start))" >"$dir.tmp/build-seconds"
    rm -rf "$dir"
    mv "$dir.tmp" "$dir"
    echo "control-plane: built $binary in $(cat "$dir/build-seconds")s"
}

build etcd etcd .
kube_ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    kube_ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=34"
    kube_ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
build kube-apiserver kube-apiserver . "$kube_ldflags"
build kube-controller-manager kube-controller-manager . "$kube_ldflags"
build jobset jobset-controller-manager sigs.k8s.io/jobset
build trainer trainer-controller-manager github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager
build controller-gen controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen

# The Volcano PodGroup CRD, generated from volcano.sh/apis at the version the Trainer
# module requires (resolved through the trainer wrapper module's build list).
gen_dir="${DIRS[controller-gen]}"
trainer_dir="${DIRS[trainer]}"
volcano_crd="$trainer_dir/crds/scheduling.volcano.sh_podgroups.yaml"
if [[ ! -s "$volcano_crd" ]]; then
    echo "control-plane: generating the Volcano PodGroup CRD with controller-gen $CONTROLLER_GEN_VERSION ..."
    tmp="$(mktemp -d "$trainer_dir/.crds.XXXXXX")"
    (cd "$MODULES/trainer" && "$gen_dir/bin/controller-gen" "crd:crdVersions=v1" \
        paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 "output:crd:artifacts:config=$tmp") ||
        die "controller-gen failed on volcano.sh/apis/pkg/apis/scheduling/v1beta1"
    [[ -s "$tmp/scheduling.volcano.sh_podgroups.yaml" ]] ||
        die "controller-gen wrote no scheduling.volcano.sh_podgroups.yaml (got: $(ls "$tmp"))"
    mkdir -p "$trainer_dir/crds"
    mv "$tmp/scheduling.volcano.sh_podgroups.yaml" "$volcano_crd"
    rm -rf "$tmp"
fi
volcano_version="$(cd "$MODULES/trainer" && go list -m -f '{{.Version}}' volcano.sh/apis)"
# JobSet's webhook configurations are read from its module (config/components/webhook).
jobset_module_dir="$(cd "$MODULES/jobset" && go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)"
[[ -f "$jobset_module_dir/config/components/webhook/manifests.yaml" ]] ||
    die "sigs.k8s.io/jobset $JOBSET_VERSION has no config/components/webhook/manifests.yaml in $jobset_module_dir"

seconds() { cat "$1/build-seconds"; }
etcd_dir="${DIRS[etcd]}"
kube_dir="${DIRS[kube-apiserver]}"
kcm_dir="${DIRS[kube-controller-manager]}"
jobset_dir="${DIRS[jobset]}"
cat >"$MANIFEST.tmp" <<EOF
{
  "versions": {
    "etcd": "$ETCD_VERSION",
    "kube-apiserver": "$KUBE_VERSION",
    "kube-controller-manager": "$KUBE_VERSION",
    "jobset": "$JOBSET_VERSION",
    "trainer": "$TRAINER_VERSION",
    "controller-gen": "$CONTROLLER_GEN_VERSION",
    "volcano.sh/apis": "$volcano_version",
    "go": "$go_version"
  },
  "binaries": {
    "etcd": "$etcd_dir/bin/etcd",
    "kube-apiserver": "$kube_dir/bin/kube-apiserver",
    "kube-controller-manager": "$kcm_dir/bin/kube-controller-manager",
    "jobset-controller-manager": "$jobset_dir/bin/jobset-controller-manager",
    "trainer-controller-manager": "$trainer_dir/bin/trainer-controller-manager",
    "controller-gen": "$gen_dir/bin/controller-gen"
  },
  "coldBuildSeconds": {
    "etcd": $(seconds "$etcd_dir"),
    "kube-apiserver": $(seconds "$kube_dir"),
    "kube-controller-manager": $(seconds "$kcm_dir"),
    "jobset-controller-manager": $(seconds "$jobset_dir"),
    "trainer-controller-manager": $(seconds "$trainer_dir"),
    "controller-gen": $(seconds "$gen_dir")
  },
  "moduleDirs": {
    "sigs.k8s.io/jobset": "$jobset_module_dir"
  },
  "crds": {
    "podgroups.scheduling.volcano.sh": "$volcano_crd"
  }
}
EOF
mv -f "$MANIFEST.tmp" "$MANIFEST"
echo "control-plane: ready ($MANIFEST)"
