// Command smpcheck is the Go side of trainc's differential tests: it runs the real
// apimachinery strategic merge patch and the real encoding/json round trip.
//
// Input, one JSON object per line on stdin:
//
//	{"op": "smp", "type": "JobSetSpec", "original": {...}, "patch": {...}}
//	{"op": "roundtrip", "type": "io.k8s.api.core.v1.PodSpec", "value": {...}}
//
// "smp" calls strategicpatch.StrategicMergePatch(original, patch, <type>{}), the
// way the Trainer merges runtimePatches (Go struct tags as the merge schema).
// "roundtrip" is json.Marshal(json.Unmarshal(value into <type>)) with encoding/json.
// Types are named as in typeinfo.json (e.g. jobset.v1alpha2.JobSetSpec); short
// names (JobSetSpec, PodSpec, ...) are accepted for smp.
//
// Output, one line per input line: {"result": <json>} or {"error": "<message>"}
// (a panic inside apimachinery is reported as an error).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/strategicpatch"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

var roots = []any{
	trainer.TrainJob{}, trainer.TrainingRuntime{}, trainer.ClusterTrainingRuntime{},
	jobsetv1alpha2.JobSet{}, schedpluginsv1alpha1.PodGroup{}, volcanov1beta1.PodGroup{},
	corev1.ConfigMap{}, corev1.Secret{}, corev1.Pod{}, batchv1.Job{},
}

var namePrefixes = []string{
	"github.com/kubeflow/trainer/v2/pkg/apis/",
	"sigs.k8s.io/jobset/api/",
	"volcano.sh/apis/pkg/apis/",
	"sigs.k8s.io/scheduler-plugins/apis/",
}

// typeName must agree with upstream/typeinfo.
func typeName(t reflect.Type) string {
	name := t.PkgPath() + "." + t.Name()
	for _, prefix := range namePrefixes {
		name = strings.ReplaceAll(name, prefix, "")
	}
	name = strings.ReplaceAll(name, "k8s.io", "io.k8s")
	return strings.ReplaceAll(name, "/", ".")
}

// collect indexes every named struct type reachable from t.
func collect(t reflect.Type, into map[string]reflect.Type) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		collect(t.Elem(), into)
	case reflect.Map:
		collect(t.Key(), into)
		collect(t.Elem(), into)
	case reflect.Struct:
		if t.Name() == "" {
			return
		}
		name := typeName(t)
		if _, seen := into[name]; seen {
			return
		}
		into[name] = t
		for i := 0; i < t.NumField(); i++ {
			collect(t.Field(i).Type, into)
		}
	}
}

var shortNames = map[string]string{
	"JobSetSpec":      "jobset.v1alpha2.JobSetSpec",
	"ReplicatedJob":   "jobset.v1alpha2.ReplicatedJob",
	"JobTemplateSpec": "io.k8s.api.batch.v1.JobTemplateSpec",
	"JobSpec":         "io.k8s.api.batch.v1.JobSpec",
	"PodTemplateSpec": "io.k8s.api.core.v1.PodTemplateSpec",
	"PodSpec":         "io.k8s.api.core.v1.PodSpec",
	"Container":       "io.k8s.api.core.v1.Container",
	"ObjectMeta":      "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
}

type request struct {
	Op       string          `json:"op"`
	Type     string          `json:"type"`
	Original json.RawMessage `json:"original"`
	Patch    json.RawMessage `json:"patch"`
	Value    json.RawMessage `json:"value"`
}

type response struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

func handle(types map[string]reflect.Type, line []byte) (resp response) {
	defer func() {
		if r := recover(); r != nil {
			resp = response{Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return response{Error: "bad request: " + err.Error()}
	}
	name := req.Type
	if full, ok := shortNames[name]; ok {
		name = full
	}
	t, ok := types[name]
	if !ok {
		return response{Error: "unknown type " + req.Type}
	}
	var out []byte
	var err error
	switch req.Op {
	case "smp":
		out, err = strategicpatch.StrategicMergePatch(req.Original, req.Patch, reflect.New(t).Elem().Interface())
	case "roundtrip":
		v := reflect.New(t)
		if err = json.Unmarshal(req.Value, v.Interface()); err == nil {
			out, err = json.Marshal(v.Interface())
		}
	default:
		err = fmt.Errorf("unknown op %q", req.Op)
	}
	if err != nil {
		return response{Error: err.Error()}
	}
	return response{Result: out}
}

func main() {
	types := map[string]reflect.Type{}
	for _, root := range roots {
		collect(reflect.TypeOf(root), types)
	}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for {
		line, readErr := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			if err := enc.Encode(handle(types, line)); err != nil {
				fmt.Fprintln(os.Stderr, "smpcheck:", err)
				os.Exit(1)
			}
			out.Flush()
		}
		if readErr != nil {
			break
		}
	}
	out.Flush()
}
