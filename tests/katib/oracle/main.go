// Command katib-oracle answers, with the pinned Katib release's own code, what trainc's
// compiler/katib computes for an Experiment: its defaulting webhook (SetDefault), its
// validating webhook (validator.ValidateExperiment) and the trial manifests its manifest
// generator makes (GetRunSpecWithHyperParameters, Katib's text substitution).
//
// One JSON request per stdin line, one JSON answer per stdout line:
//
//	{"experiment": {...}, "configMaps": [...], "katibConfig": "<katib-config.yaml text>",
//	 "trials": [{"name": "exp-xxxxxxxx", "assignments": [{"name": "lr", "value": "0.1"}]}]}
//
// Answer: {"decodeError": "..."} when the Experiment does not decode into Katib's type, or
// {"defaulted": {...}, "errors": ["field error", ...], "trials": [{"spec": "<JSON>"} or
// {"error": "..."}]}. The trials are generated from the defaulted Experiment, as Katib's
// controller does, when the webhook accepts it (none otherwise).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	commonv1beta1 "github.com/kubeflow/katib/pkg/apis/controller/common/v1beta1"
	experimentsv1beta1 "github.com/kubeflow/katib/pkg/apis/controller/experiments/v1beta1"
	"github.com/kubeflow/katib/pkg/controller.v1beta1/experiment/manifest"
	"github.com/kubeflow/katib/pkg/webhook/v1beta1/experiment/validator"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

type trial struct {
	Name        string                              `json:"name"`
	Assignments []commonv1beta1.ParameterAssignment `json:"assignments"`
}

type request struct {
	Experiment  json.RawMessage    `json:"experiment"`
	ConfigMaps  []corev1.ConfigMap `json:"configMaps"`
	KatibConfig string             `json:"katibConfig"`
	Trials      []trial            `json:"trials"`
}

type trialAnswer struct {
	Spec  string `json:"spec,omitempty"`
	Error string `json:"error,omitempty"`
}

type answer struct {
	DecodeError string                         `json:"decodeError,omitempty"`
	Defaulted   *experimentsv1beta1.Experiment `json:"defaulted,omitempty"`
	Errors      []string                       `json:"errors"`
	Trials      []trialAnswer                  `json:"trials"`
}

func clientFor(req request) client.Client {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	objects := []client.Object{&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "katib-config", Namespace: "kubeflow"},
		Data:       map[string]string{"katib-config.yaml": req.KatibConfig},
	}}
	for i := range req.ConfigMaps {
		objects = append(objects, &req.ConfigMaps[i])
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
}

func handle(req request) (ans answer) {
	ans.Errors = []string{}
	ans.Trials = []trialAnswer{}
	defer func() {
		if r := recover(); r != nil {
			ans.Errors = append(ans.Errors, fmt.Sprintf("panic: %v", r))
		}
	}()
	exp := &experimentsv1beta1.Experiment{}
	if err := json.Unmarshal(req.Experiment, exp); err != nil {
		return answer{DecodeError: err.Error(), Errors: []string{}, Trials: []trialAnswer{}}
	}
	exp.SetDefault()
	ans.Defaulted = exp.DeepCopy()
	gen := manifest.New(clientFor(req))
	for _, e := range validator.New(gen).ValidateExperiment(exp.DeepCopy(), nil) {
		ans.Errors = append(ans.Errors, e.Error())
	}
	if len(ans.Errors) > 0 {
		// Katib's controller never sees an Experiment its webhook rejected
		return ans
	}
	for _, t := range req.Trials {
		spec, err := gen.GetRunSpecWithHyperParameters(exp.DeepCopy(), t.Name, exp.Namespace, t.Assignments)
		if err != nil {
			ans.Trials = append(ans.Trials, trialAnswer{Error: err.Error()})
			continue
		}
		text, err := spec.MarshalJSON()
		if err != nil {
			ans.Trials = append(ans.Trials, trialAnswer{Error: err.Error()})
			continue
		}
		ans.Trials = append(ans.Trials, trialAnswer{Spec: string(text)})
	}
	return ans
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var req request
		var ans answer
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			ans = answer{DecodeError: "request: " + err.Error(), Errors: []string{}, Trials: []trialAnswer{}}
		} else {
			ans = handle(req)
		}
		line, err := json.Marshal(ans)
		if err != nil {
			line, _ = json.Marshal(answer{DecodeError: "answer: " + err.Error()})
		}
		out.Write(line)
		out.WriteString("\n")
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
