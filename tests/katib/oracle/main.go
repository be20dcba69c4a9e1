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
// Or, for Katib's pod webhook on one Pod of a trial (the Trial made from the defaulted
// Experiment as Katib's controller makes it, the Pod owned through a Job, a JobSet and a
// TrainJob by the Trial):
//
//	{"inject": {"experiment": {...}, "trial": "exp-xxxxxxxx", "pod": {...}, "katibConfig": "..."}}
//
// Answer: {"required": true, "pod": {...}} (the webhook's mutated Pod) or {"error": "..."}.
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

	configv1beta1 "github.com/kubeflow/katib/pkg/apis/config/v1beta1"
	commonv1beta1 "github.com/kubeflow/katib/pkg/apis/controller/common/v1beta1"
	experimentsv1beta1 "github.com/kubeflow/katib/pkg/apis/controller/experiments/v1beta1"
	suggestionsv1beta1 "github.com/kubeflow/katib/pkg/apis/controller/suggestions/v1beta1"
	trialsv1beta1 "github.com/kubeflow/katib/pkg/apis/controller/trials/v1beta1"
	"github.com/kubeflow/katib/pkg/controller.v1beta1/experiment/manifest"
	"github.com/kubeflow/katib/pkg/controller.v1beta1/util"
	"github.com/kubeflow/katib/pkg/webhook/v1beta1/experiment/validator"
	podwebhook "github.com/kubeflow/katib/pkg/webhook/v1beta1/pod"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

type trial struct {
	Name        string                              `json:"name"`
	Assignments []commonv1beta1.ParameterAssignment `json:"assignments"`
}

type injectRequest struct {
	Experiment  json.RawMessage `json:"experiment"`
	Trial       string          `json:"trial"`
	Pod         corev1.Pod      `json:"pod"`
	KatibConfig string          `json:"katibConfig"`
}

type injectAnswer struct {
	Required bool        `json:"required"`
	Pod      *corev1.Pod `json:"pod,omitempty"`
	Error    string      `json:"error,omitempty"`
}

type request struct {
	Inject      *injectRequest     `json:"inject"`
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

// owned is an unstructured object of the given kind with one controller owner.
func owned(apiVersion, kind, name, ns string, owner metav1.OwnerReference) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	u.SetNamespace(ns)
	u.SetOwnerReferences([]metav1.OwnerReference{owner})
	return u
}

func ownerRef(apiVersion, kind, name string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: &yes}
}

func inject(req injectRequest) (ans injectAnswer) {
	defer func() {
		if r := recover(); r != nil {
			ans = injectAnswer{Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	exp := &experimentsv1beta1.Experiment{}
	if err := json.Unmarshal(req.Experiment, exp); err != nil {
		return injectAnswer{Error: "experiment: " + err.Error()}
	}
	exp.SetDefault()
	ns := exp.Namespace
	// the Trial as the experiment controller's getTrialInstance makes it (no suggestion
	// labels, no early-stopping rules)
	trial := &trialsv1beta1.Trial{ObjectMeta: metav1.ObjectMeta{Name: req.Trial, Namespace: ns, Labels: util.TrialLabels(exp)}}
	trial.Spec.Objective = exp.Spec.Objective
	if exp.Spec.MetricsCollectorSpec != nil {
		trial.Spec.MetricsCollector = *exp.Spec.MetricsCollectorSpec
	}
	trial.Spec.PrimaryPodLabels = exp.Spec.TrialTemplate.PrimaryPodLabels
	trial.Spec.PrimaryContainerName = exp.Spec.TrialTemplate.PrimaryContainerName
	suggestion := &suggestionsv1beta1.Suggestion{ObjectMeta: metav1.ObjectMeta{Name: exp.Name, Namespace: ns}}
	suggestion.Spec.Algorithm = exp.Spec.Algorithm.DeepCopy()

	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = batchv1.AddToScheme(scheme)
	_ = configv1beta1.AddToScheme(scheme)
	_ = experimentsv1beta1.AddToScheme(scheme)
	_ = trialsv1beta1.AddToScheme(scheme)
	_ = suggestionsv1beta1.AddToScheme(scheme)
	objects := []client.Object{
		&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "katib-config", Namespace: "kubeflow"},
			Data:       map[string]string{"katib-config.yaml": req.KatibConfig},
		},
		exp, trial, suggestion,
		// the TrainJob and its JobSet, named after the trial
		owned("trainer.kubeflow.org/v1alpha1", "TrainJob", req.Trial, ns, ownerRef("kubeflow.org/v1beta1", "Trial", req.Trial)),
		owned("jobset.x-k8s.io/v1alpha2", "JobSet", req.Trial, ns, ownerRef("trainer.kubeflow.org/v1alpha1", "TrainJob", req.Trial)),
	}
	for _, o := range req.Pod.OwnerReferences {
		if o.Kind == "Job" {
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: ns,
				OwnerReferences: []metav1.OwnerReference{ownerRef("jobset.x-k8s.io/v1alpha2", "JobSet", req.Trial)}}}
			objects = append(objects, job)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
	injector := podwebhook.NewSidecarInjector(c, nil)
	pod := req.Pod.DeepCopy()
	required, err := injector.MutationRequired(pod, ns)
	if err != nil {
		return injectAnswer{Error: "MutationRequired: " + err.Error()}
	}
	if !required {
		return injectAnswer{Required: false}
	}
	mutated, err := injector.Mutate(pod, ns)
	if err != nil {
		return injectAnswer{Required: true, Error: err.Error()}
	}
	return injectAnswer{Required: true, Pod: mutated}
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
		} else if req.Inject != nil {
			line, _ := json.Marshal(inject(*req.Inject))
			out.Write(line)
			out.WriteString("\n")
			continue
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
