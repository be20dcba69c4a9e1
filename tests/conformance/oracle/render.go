package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	jobruntime "github.com/kubeflow/trainer/v2/pkg/runtime"
)

type renderOptions struct {
	ownerUID       string
	order          string // "canonical" or "returned"
	maskSecretData bool
	runs           int
	timing         bool // print where the time went as one JSON line on stderr
}

// renderedObject is one apply configuration returned by NewObjects.
type renderedObject struct {
	job        int // index of the TrainJob in s.trainJobs
	returned   int // position in the slice NewObjects returned
	apiVersion string
	kind       string
	namespace  string
	name       string
	json       []byte
}

func (o *renderedObject) String() string {
	return fmt.Sprintf("%s %s %s/%s", o.apiVersion, o.kind, o.namespace, o.name)
}

const maskedValue = "<masked>"

// render runs the controller for every admitted TrainJob and prints the
// objects as a YAML stream.
func (s *session) render(ctx context.Context, ro *renderOptions, stdout, stderr io.Writer) (int, error) {
	var first []*renderedObject
	nondeterministic := false
	started := time.Now()
	var rendered time.Time
	for run := 0; run < ro.runs; run++ {
		objs, issues, err := s.renderOnce(ctx, run == 0, stderr)
		if run == 0 {
			rendered = time.Now()
		}
		if err != nil {
			return 0, err
		}
		if len(issues) > 0 {
			for _, is := range issues {
				s.report.addError(is)
			}
			return exitRejected, writeJSON(stdout, s.report)
		}
		if run == 0 {
			first = objs
			continue
		}
		if diff := compareRuns(first, objs, run+1); diff != "" {
			nondeterministic = true
			fmt.Fprintf(stderr, "oracle: run %d differs from run 1 (upstream output is not deterministic):\n%s\n", run+1, diff)
		}
	}

	ordered := append([]*renderedObject{}, first...)
	if ro.order == "canonical" {
		sortCanonical(ordered)
	}
	var out bytes.Buffer
	for _, o := range ordered {
		raw := o.json
		if ro.maskSecretData {
			masked, err := maskSecretData(o)
			if err != nil {
				return 0, err
			}
			raw = masked
		}
		y, err := yaml.JSONToYAML(raw)
		if err != nil {
			return 0, fmt.Errorf("converting %s to YAML: %w", o, err)
		}
		out.WriteString("---\n")
		out.Write(y)
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return 0, err
	}
	if ro.timing {
		// renderSeconds: the first run's per-TrainJob fresh cluster, NewObjects and the
		// output objects' create path; admission of the inputs is timed by the caller.
		fmt.Fprintf(stderr, "{\"trainJobs\": %d, \"objects\": %d, \"renderSeconds\": %.3f, \"outputSeconds\": %.3f}\n",
			len(s.trainJobs), len(first), rendered.Sub(started).Seconds(), time.Since(rendered).Seconds())
	}
	if nondeterministic {
		return exitNondeterministic, nil
	}
	return exitOK, nil
}

// renderOnce does one first-reconcile per admitted TrainJob, each in a fresh
// emulated cluster (so nothing the controller creates is visible to it yet).
func (s *session) renderOnce(ctx context.Context, verbose bool, stderr io.Writer) ([]*renderedObject, []issue, error) {
	var objs []*renderedObject
	var issues []issue
	for i, job := range s.trainJobs {
		tj := job.obj.DeepCopy()
		if skippedByController(tj) {
			if verbose && s.opts.verbosity > 0 {
				fmt.Fprintf(stderr, "oracle: %s is managed by %q; the Trainer controller creates nothing for it\n", job.entry.label, *tj.Spec.ManagedBy)
			}
			continue
		}
		c, err := s.newCluster(ctx, tj.DeepCopy())
		if err != nil {
			return nil, nil, err
		}
		key := jobruntime.RuntimeRefToRuntimeRegistryKey(tj.Spec.RuntimeRef)
		rt, ok := c.runtimes[key]
		if !ok {
			issues = append(issues, job.entry.issue(originController, issue{Message: fmt.Sprintf("unsupported runtime: %s", key)}))
			continue
		}
		applyConfigs, err := rt.NewObjects(ctx, tj)
		if err != nil {
			issues = append(issues, job.entry.issue(originController, issue{Message: err.Error()}))
			continue
		}
		var created []*renderedObject
		var refused []issue
		for j, ac := range applyConfigs {
			o, err := newRenderedObject(i, j, ac)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", job.entry.label, err)
			}
			found, err := s.admitOutput(ctx, o)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", job.entry.label, err)
			}
			for _, is := range found {
				refused = append(refused, job.entry.issue(originController, is))
			}
			created = append(created, o)
		}
		if len(refused) > 0 {
			// The API server refuses an object the controller creates: the reconcile
			// fails and none of this TrainJob's objects exist.
			issues = append(issues, refused...)
			continue
		}
		objs = append(objs, created...)
		if verbose && s.opts.verbosity > 0 {
			reportSideEffects(ctx, c, tj, stderr)
		}
	}
	return objs, issues, nil
}

func newRenderedObject(job, returned int, ac any) (*renderedObject, error) {
	raw, err := json.Marshal(ac)
	if err != nil {
		return nil, fmt.Errorf("serializing %T: %w", ac, err)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	return &renderedObject{
		job: job, returned: returned,
		apiVersion: head.APIVersion, kind: head.Kind,
		namespace: head.Metadata.Namespace, name: head.Metadata.Name,
		json: raw,
	}, nil
}

// reportSideEffects lists, on stderr, objects the reconcile created through the
// client instead of returning them (the runtime snapshot ConfigMap).
func reportSideEffects(ctx context.Context, c *cluster, tj *trainer.TrainJob, stderr io.Writer) {
	var cms corev1.ConfigMapList
	if err := c.client.List(ctx, &cms, client.InNamespace(tj.Namespace)); err != nil {
		return
	}
	for _, cm := range cms.Items {
		for _, ref := range cm.OwnerReferences {
			if ref.UID == tj.UID {
				fmt.Fprintf(stderr, "oracle: side effect (not in the output): ConfigMap %s/%s created through the client\n", cm.Namespace, cm.Name)
			}
		}
	}
}

// kindRank fixes the canonical order of kinds within one TrainJob.
func kindRank(o *renderedObject) int {
	switch {
	case o.kind == "JobSet":
		return 0
	case o.kind == "PodGroup" && strings.HasPrefix(o.apiVersion, "scheduling.x-k8s.io/"):
		return 1
	case o.kind == "PodGroup":
		return 2
	case o.kind == "ConfigMap":
		return 3
	case o.kind == "Secret":
		return 4
	default:
		return 5
	}
}

// sortCanonical orders objects by TrainJob (input order), then kind rank,
// apiVersion, kind, namespace and name.
func sortCanonical(objs []*renderedObject) {
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		if a.job != b.job {
			return a.job < b.job
		}
		if ra, rb := kindRank(a), kindRank(b); ra != rb {
			return ra < rb
		}
		ka := []string{a.apiVersion, a.kind, a.namespace, a.name}
		kb := []string{b.apiVersion, b.kind, b.namespace, b.name}
		for k := range ka {
			if ka[k] != kb[k] {
				return ka[k] < kb[k]
			}
		}
		return false
	})
}

// maskSecretData replaces the values of a core/v1 Secret's data and stringData.
func maskSecretData(o *renderedObject) ([]byte, error) {
	if o.apiVersion != "v1" || o.kind != "Secret" {
		return o.json, nil
	}
	var m map[string]any
	if err := json.Unmarshal(o.json, &m); err != nil {
		return nil, err
	}
	for _, key := range []string{"data", "stringData"} {
		if data, ok := m[key].(map[string]any); ok {
			for k := range data {
				data[k] = maskedValue
			}
		}
	}
	return json.Marshal(m)
}

// compareRuns describes how two renders differ, or returns "" when they are
// equal up to object order and Secret data.
func compareRuns(a, b []*renderedObject, run int) string {
	text := func(objs []*renderedObject) string {
		sorted := append([]*renderedObject{}, objs...)
		sortCanonical(sorted)
		var buf strings.Builder
		for _, o := range sorted {
			raw, err := maskSecretData(o)
			if err != nil {
				raw = o.json
			}
			y, err := yaml.JSONToYAML(raw)
			if err != nil {
				y = raw
			}
			buf.WriteString("--- # " + o.String() + "\n")
			buf.Write(y)
		}
		return buf.String()
	}
	ta, tb := text(a), text(b)
	if ta == tb {
		return ""
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(ta), B: difflib.SplitLines(tb),
		FromFile: "run 1", ToFile: fmt.Sprintf("run %d", run), Context: 2,
	})
	if err != nil {
		return err.Error()
	}
	return diff
}
