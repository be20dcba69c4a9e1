# trainc — the two commands of a fresh machine are `make render` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# the newest emulated Trainer release (every one: compiler/upstream/versions.py)
TRAINER_VERSION := v2.3.0
ORACLE_DIR := tests/conformance/oracle
ORACLE := $(ORACLE_DIR)/bin/oracle
MIGRATE_ORACLE_DIR := tests/migrate/oracle
MIGRATE_ORACLE := $(MIGRATE_ORACLE_DIR)/bin/v1oracle
KUEUE_ORACLE_DIR := tests/kueue/oracle
KUEUE_ORACLE := $(KUEUE_ORACLE_DIR)/bin/kueue-oracle
PODS_ORACLE_DIR := tests/pods/oracle
PODS_ORACLE := $(PODS_ORACLE_DIR)/bin/jobset-oracle $(PODS_ORACLE_DIR)/bin/kube-oracle
KATIB_ORACLE_DIR := tests/katib/oracle
KATIB_ORACLE := $(KATIB_ORACLE_DIR)/bin/katib-oracle
N ?= 1000

.PHONY: setup upstream upstream-wheel dist cue kubectl render test lint docs oracle pods-oracle vapbench goldens conformance conformance-fuzz conformance-live conformance-live-fuzz control-plane fuzz bench bench-apply clean migrate-oracle migrate-conformance extension-conformance kueue-oracle kueue-conformance katib-oracle katib-conformance

setup: $(VENV)/.installed upstream cue kubectl

# trainc depends on the trainc-upstream data wheel: built first and installed from its
# file in $(DIST)/, so that no index is ever asked for a package of that name.
# The stamp holds the hash of the pyproject.toml the venv was installed from, and the
# venv is installed again whenever it differs: a file time alone misses a copied or
# cached .venv, or a checkout that kept an older pyproject.toml time, and the tests
# would then find a dev extra missing. The last line checks that every test tool is there.
# the data wheel's version, as pyproject.toml pins it: an older wheel left in $(DIST)/ is not it
UPSTREAM_VERSION := $(shell sed -n 's/.*"trainc-upstream==\([^"]*\)".*/\1/p' pyproject.toml)
PYPROJECT_HASH := $(shell $(PYTHON) -c "import hashlib; print(hashlib.sha256(open('pyproject.toml', 'rb').read()).hexdigest())")
ifneq ($(PYPROJECT_HASH),$(shell cat $(VENV)/.installed 2>/dev/null))
.PHONY: $(VENV)/.installed
endif
$(VENV)/.installed: pyproject.toml | upstream-wheel
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-index --no-deps --force-reinstall $(DIST)/trainc_upstream-$(UPSTREAM_VERSION)-py3-none-any.whl
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -c "import pytest, hypothesis, syrupy, pre_commit, check_jsonschema, lupa, ruamel.yaml.clibz, mkdocs, material"
	echo $(PYPROJECT_HASH) > $@

# Upstream artifacts (CRDs, OpenAPI document, Go type facts) at pinned versions,
# fetched through the Go module proxy into a cache outside the repo.
upstream:
	@bash scripts/fetch-upstream.sh

# What a user installs (README "Install"): the trainc-upstream data wheel (the artifacts
# of every emulated release, from the pinned modules in the Go module cache), trainc's
# wheel and sdist, into $(DIST)/; reproducible (SOURCE_DATE_EPOCH: the last commit's time).
DIST ?= dist
DIST_VENV := build/dist-venv
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)
upstream-wheel: upstream
	@$(PYTHON) scripts/build-upstream-wheel.py --out $(DIST)

$(DIST_VENV)/.installed:
	$(PYTHON) -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/python -m pip install -q build==1.6.1
	touch $@

dist: upstream-wheel $(DIST_VENV)/.installed
	rm -f $(DIST)/trainc-*.whl $(DIST)/trainc-*.tar.gz
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(DIST_VENV)/bin/python -m build -q --outdir $(DIST) .
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(PYTHON) scripts/normalize-sdist.py $(DIST)/trainc-*.tar.gz
	@ls -l $(DIST)

# The pinned cue CLI (for .cue policies), built with `go install` into the same cache.
cue:
	@bash scripts/install-cue.sh

# kubectl (or the standalone kustomize it embeds) for the overlay differential test.
kubectl:
	@bash scripts/install-kubectl.sh

render: setup
	$(PY) -m compiler render example -o out

test: setup oracle pods-oracle control-plane
	$(PY) -m pytest

lint: setup
	$(VENV)/bin/ruff check compiler tests docs/hooks
	$(VENV)/bin/ruff format --check compiler tests docs/hooks
	$(VENV)/bin/mypy
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict -d "$$tmp"

# The manual (docs/, mkdocs.yml) into site/; `make lint` builds it --strict into a temporary folder.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# The conformance oracle: the real Kubeflow Trainer code, built once per emulated
# Trainer release from the same sources (an older release with its own module list,
# versions/<release>.mod, and build tag); `go build` caches, so a second run only
# checks that nothing changed.
ORACLE_V2_2 := $(ORACLE_DIR)/bin/oracle-v2.2.0
ORACLE_V2_1 := $(ORACLE_DIR)/bin/oracle-v2.1.0
ORACLE_V2_0 := $(ORACLE_DIR)/bin/oracle-v2.0.0
oracle: $(ORACLE) $(ORACLE_V2_2) $(ORACLE_V2_1) $(ORACLE_V2_0)
$(ORACLE): $(wildcard $(ORACLE_DIR)/*.go) $(ORACLE_DIR)/go.mod $(ORACLE_DIR)/go.sum
	cd $(ORACLE_DIR) && go build -o bin/oracle .
$(ORACLE_V2_2): $(wildcard $(ORACLE_DIR)/*.go) $(ORACLE_DIR)/versions/v2.2.0.mod $(ORACLE_DIR)/versions/v2.2.0.sum
	cd $(ORACLE_DIR) && go build -modfile=versions/v2.2.0.mod -tags trainer_v2_2 -o bin/oracle-v2.2.0 .
$(ORACLE_V2_1): $(wildcard $(ORACLE_DIR)/*.go) $(ORACLE_DIR)/versions/v2.1.0.mod $(ORACLE_DIR)/versions/v2.1.0.sum
	cd $(ORACLE_DIR) && go build -modfile=versions/v2.1.0.mod -tags trainer_v2_2,trainer_v2_1 -o bin/oracle-v2.1.0 .
# v2.0.0 links k8s.io 0.32 and JobSet 0.8 and needs the third tag (compat_v20.go, no Volcano).
$(ORACLE_V2_0): $(wildcard $(ORACLE_DIR)/*.go) $(ORACLE_DIR)/versions/v2.0.0.mod $(ORACLE_DIR)/versions/v2.0.0.sum
	cd $(ORACLE_DIR) && go build -modfile=versions/v2.0.0.mod -tags trainer_v2_2,trainer_v2_1,trainer_v2_0 -o bin/oracle-v2.0.0 .

# The pods oracle: below the JobSet, sigs.k8s.io/jobset v0.12.0's webhooks and controller
# (jobset/) and k8s.io/kubernetes v1.34.4's Job/Service/Pod create path and Job controller
# (kube/), each with its own go.mod as the two upstreams pin different k8s.io libraries;
# tests/pods/test_expand_oracle.py compares trainc's expansion with them.
pods-oracle: $(PODS_ORACLE)
$(PODS_ORACLE_DIR)/bin/jobset-oracle: $(wildcard $(PODS_ORACLE_DIR)/jobset/*.go) $(PODS_ORACLE_DIR)/jobset/go.mod $(PODS_ORACLE_DIR)/jobset/go.sum
	cd $(PODS_ORACLE_DIR)/jobset && go build -o ../bin/jobset-oracle .
$(PODS_ORACLE_DIR)/bin/kube-oracle: $(wildcard $(PODS_ORACLE_DIR)/kube/*.go) $(PODS_ORACLE_DIR)/kube/go.mod $(PODS_ORACLE_DIR)/kube/go.sum
	cd $(PODS_ORACLE_DIR)/kube && go build -o ../bin/kube-oracle .

goldens: setup oracle
	$(PY) -m tests.conformance.goldens

conformance: setup oracle
	$(PY) -m tests.conformance.compare

conformance-fuzz: setup oracle
	$(PY) -m tests.conformance.fuzz --count $(N)

# Robustness: N hostile cases through the CLI in-process (per-case time and memory
# limits) over four surfaces: render/check inputs, argocd generate's environment and
# parameters, migrate's v1 and Volcano jobs, apply against a fake API server. An apply
# case costs about 20 times a render case (it waits out slow answers), hence the weights.
# Closing line: fuzz: N cases, T tracebacks, H hangs, L without location.
FUZZ_SURFACES ?= render:6,argocd:6,migrate:6,apply:1
fuzz: setup
	$(PY) -m tests.fuzz --count $(N) --surfaces $(FUZZ_SURFACES)

# The live control plane (tests/live): etcd, kube-apiserver, the Trainer and JobSet
# controller managers and kube-controller-manager at pinned versions, built once from
# the Go module proxy into the cache.
control-plane:
	@bash scripts/build-control-plane.sh

# Every golden case through the real control plane, down to the Pods; closing lines:
# conformance-live: X/Y cases identical, then (with compiler.expand) X/Y cases identical (jobs, services, pods)
conformance-live: setup control-plane
	$(PY) -m tests.live.conformance_live $(ARGS)

# N random runtimes + TrainJobs (tests/conformance/strategies.py pod_cases) through the
# same control plane down to the Pods, against trainc --expand pods; each distinct
# difference reduced into conformance-out/live-fuzz/<hash>/ (a golden-style case folder);
# closing line: conformance-live-fuzz: N cases, D distinct differences
SEED ?= 0
conformance-live-fuzz: setup control-plane
	$(PY) -m tests.live.fuzz_pods --count $(N) --seed $(SEED) $(ARGS)

# The migration oracle: Training Operator v1.9.4 and MPI Operator v0.7.0 building the
# pods of a v1 job (defaulting, validation, pod construction), without a cluster.
migrate-oracle: $(MIGRATE_ORACLE)
$(MIGRATE_ORACLE): $(wildcard $(MIGRATE_ORACLE_DIR)/*.go) $(MIGRATE_ORACLE_DIR)/go.mod $(MIGRATE_ORACLE_DIR)/go.sum
	cd $(MIGRATE_ORACLE_DIR) && go build -o bin/v1oracle .

# Every migration case: the v1 operator's pods vs the pods of the migrated TrainJob.
migrate-conformance: setup migrate-oracle
	$(PY) -m tests.migrate.conformance

# The Kueue oracle: the pinned Kueue release's own code (its TrainJob and JobSet
# integrations' PodSets, AdjustResources, the Workload's requests, the flavor assigner).
kueue-oracle: $(KUEUE_ORACLE)
$(KUEUE_ORACLE): $(wildcard $(KUEUE_ORACLE_DIR)/*.go) $(KUEUE_ORACLE_DIR)/go.mod $(KUEUE_ORACLE_DIR)/go.sum
	cd $(KUEUE_ORACLE_DIR) && go build -o bin/kueue-oracle .

# trainc's Workloads and admission verdicts against the Kueue oracle (golden cases with a
# queue, a seeded fuzz of queue setups); closing line: kueue-conformance: ... 0 differences
kueue-conformance: setup kueue-oracle
	$(PY) -m pytest tests/kueue/test_kueue_conformance.py -q -s

# The Katib oracle: the pinned Katib release's own code (its Experiment defaulting and
# validating webhooks, its trial manifest generator), built from tests/katib/oracle/go.mod.
katib-oracle: $(KATIB_ORACLE)
$(KATIB_ORACLE): $(wildcard $(KATIB_ORACLE_DIR)/*.go) $(KATIB_ORACLE_DIR)/go.mod $(KATIB_ORACLE_DIR)/go.sum
	cd $(KATIB_ORACLE_DIR) && go build -o bin/katib-oracle .

# trainc's Experiment verdicts, defaults and substituted trials against the Katib oracle
# (the case corpus and a seeded fuzz) and its pod webhook on trial Pods; closing lines:
# katib-conformance: X/Y identical
katib-conformance: setup katib-oracle
	$(PY) -m pytest tests/katib/test_katib_conformance.py tests/katib/test_katib_injector_conformance.py -q -s

# The opt-in extensions (Intel MPI, MPICH, TensorFlow, PaddlePaddle, elastic PyTorch)
# against the same v1 operators' code; closing line: extension-conformance: X/Y cases identical
extension-conformance: setup migrate-oracle
	$(PY) -m tests.extensions.conformance

# Check and overlay figures; smaller runs: make bench CHECK_SIZES=1000 POLICY_SIZES=1000 OVERLAY_SIZES=10000
CHECK_SIZES ?= 1000,10000,50000
POLICY_SIZES ?= 1000,10000
OVERLAY_SIZES ?= 10000,50000
DOWNSTREAM_SIZES ?= 1000,10000

# The Go side of the policy bench: k8s.io/apiserver's ValidatingAdmissionPolicy code over
# the objects trainc checks (tests/bench/vapbench), built once like the oracle.
# The API server's Job and Pod validation (kube-apiserver v1.34.4's create path) against
# trainc's (compiler/apiserver/workloads); closing line:
#   conformance-pods: N cases, D verdict differences, M message differences
.PHONY: pods-validate-oracle conformance-pods clean-pods-validate
PODS_VALIDATE_DIR := tests/pods/validate
PODS_VALIDATE := $(PODS_VALIDATE_DIR)/bin/validate
pods-validate-oracle: $(PODS_VALIDATE)
$(PODS_VALIDATE): $(PODS_VALIDATE_DIR)/main.go $(PODS_VALIDATE_DIR)/go.mod $(PODS_VALIDATE_DIR)/go.sum
	cd $(PODS_VALIDATE_DIR) && go build -o bin/validate .
conformance-pods: setup pods-validate-oracle
	$(PY) -m tests.pods.validate_fuzz --count $(N)
clean: clean-pods-validate
clean-pods-validate:
	rm -rf $(PODS_VALIDATE_DIR)/bin

VAPBENCH_DIR := tests/bench/vapbench
VAPBENCH := $(VAPBENCH_DIR)/bin/vapbench
vapbench: $(VAPBENCH)
$(VAPBENCH): $(VAPBENCH_DIR)/main.go $(VAPBENCH_DIR)/go.mod $(VAPBENCH_DIR)/go.sum
	cd $(VAPBENCH_DIR) && go build -o bin/vapbench .

# render (1k..100k, -j 1 vs -j 2, incremental, the Go render side by side, and on the golden
# templates: GOLDEN_SIZES=1000,10000 by default) and validation; SIZES=1000,10000 for a
# shorter run; peak memory of 100,000 TrainJobs in one file (and one at the file size limit)
# and in 100,000 files
# (MEMORY_SIZE=10000 for a shorter run)
bench: setup oracle vapbench
	$(PY) -m tests.bench.render_bench $(if $(SIZES),--sizes $(SIZES)) $(if $(GOLDEN_SIZES),--golden-sizes $(GOLDEN_SIZES))
	$(PY) -m tests.bench.validate_bench
	$(PY) -m tests.bench.check_bench --sizes $(CHECK_SIZES) --policy-sizes $(POLICY_SIZES)
	$(PY) -m tests.bench.overlay_bench --sizes $(OVERLAY_SIZES)
	$(PY) -m tests.bench.downstream_bench --sizes $(DOWNSTREAM_SIZES)
	$(PY) -m tests.bench.memory_bench --at-limit $(if $(MEMORY_SIZE),--size $(MEMORY_SIZE))

# trainc apply next to kubectl apply --server-side, 1,000 JobSets on a private control plane
bench-apply: setup control-plane
	$(PY) -m tests.bench.apply_bench

clean:
	rm -rf $(VENV) out site dist build/upstream-data $(DIST_VENV) $(ORACLE_DIR)/bin $(VAPBENCH_DIR)/bin $(MIGRATE_ORACLE_DIR)/bin $(KUEUE_ORACLE_DIR)/bin $(PODS_ORACLE_DIR)/bin $(KATIB_ORACLE_DIR)/bin conformance-out fuzz-out
