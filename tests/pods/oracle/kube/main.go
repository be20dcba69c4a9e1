// Command kube-oracle runs Kubernetes v1.34.4's own code over the Jobs and Services the
// JobSet controller creates, for trainc's expand conformance test: the API server's
// create path of a Job (v1 defaults, then the Job strategy's PrepareForCreate, which
// generates the selector and the controller-uid/job-name labels) and of a Service (its
// defaults), then the Job controller (pkg/controller/job) against a fake clientset,
// whose Pods get the API server's Pod defaults as they are created.
//
// Input on stdin: a JSON array of cases, {"jobs": [...], "services": [...]} each (what
// the JobSet controller created for one JobSet). Output on stdout: one result per
// case, {"jobs": [...], "services": [...], "pods": [...]}, pods sorted by name.
//
// UIDs and generated name suffixes are trainc's placeholders (see uid below and
// nameSuffix), since the real ones are random.
package main

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/batch"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/controller/job"
	jobregistry "k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/utils/ptr"
)

// nameSuffix stands for the five random characters of a generated name: its zeros are
// not in the generator's alphabet, so it is never a real suffix (Pods that share a
// prefix, a NonIndexed Job's, get 00000, 00001, ...).
const nameSuffix = "00000"

// uid is trainc's placeholder UID of an object: fixed zeros, then twelve hex digits of
// the SHA-1 of "<kind>/<namespace>/<name>".
func uid(kind, namespace, name string) types.UID {
	sum := sha1.Sum([]byte(kind + "/" + namespace + "/" + name))
	return types.UID("00000000-0000-0000-0000-" + hex.EncodeToString(sum[:])[:12])
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

type input struct {
	Jobs     []json.RawMessage `json:"jobs"`
	Services []json.RawMessage `json:"services"`
}

type output struct {
	Jobs     []any    `json:"jobs"`
	Services []any    `json:"services"`
	Pods     []any    `json:"pods"`
	Errors   []string `json:"errors,omitempty"`
}

// createJob is the API server's create path of a Job, validation left out.
func createJob(raw json.RawMessage) *batchv1.Job {
	var v1job batchv1.Job
	must(json.Unmarshal(raw, &v1job))
	legacyscheme.Scheme.Default(&v1job)
	v1job.UID = uid("Job", v1job.Namespace, v1job.Name)
	var internal batch.Job
	must(legacyscheme.Scheme.Convert(&v1job, &internal, nil))
	jobregistry.Strategy.PrepareForCreate(context.Background(), &internal)
	var stored batchv1.Job
	must(legacyscheme.Scheme.Convert(&internal, &stored, nil))
	stored.APIVersion, stored.Kind = "batch/v1", "Job"
	stored.Status = batchv1.JobStatus{}
	return &stored
}

// expectedPods is how many Pods the Job controller creates at once for job.
func expectedPods(j *batchv1.Job) int {
	if ptr.Deref(j.Spec.Suspend, false) {
		return 0
	}
	n := int(ptr.Deref(j.Spec.Parallelism, 1))
	if j.Spec.Completions != nil && int(*j.Spec.Completions) < n {
		n = int(*j.Spec.Completions)
	}
	return n
}

// runController lets the Job controller create the Pods of a case's Jobs.
func runController(jobs []*batchv1.Job) ([]corev1.Pod, error) {
	objects := make([]runtime.Object, 0, len(jobs))
	want := 0
	for _, j := range jobs {
		objects = append(objects, j.DeepCopy())
		want += expectedPods(j)
	}
	client := fake.NewSimpleClientset(objects...)
	prefixes := map[string]int{} // reactors run under the fake's lock
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		pod := action.(clienttesting.CreateAction).GetObject().(*corev1.Pod)
		if pod.Name == "" && pod.GenerateName != "" {
			// trainc's placeholders: 00000, then 00001, ... for Pods sharing a prefix
			pod.Name = fmt.Sprintf("%s%05d", pod.GenerateName, prefixes[pod.GenerateName])
			prefixes[pod.GenerateName]++
		}
		pod.Namespace = action.GetNamespace()
		pod.UID = uid("Pod", pod.Namespace, pod.Name)
		legacyscheme.Scheme.Default(pod)
		return false, nil, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	controller, err := job.NewController(ctx, factory.Core().V1().Pods(), factory.Batch().V1().Jobs(), client)
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	go controller.Run(ctx, 2)
	for ctx.Err() == nil {
		pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err == nil && len(pods.Items) >= want {
			time.Sleep(100 * time.Millisecond) // no more than expected arrive
			pods, err = client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return pods.Items, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, fmt.Errorf("the Job controller created fewer than %d pods in 30s", want)
}

func toMap(obj any) any {
	data, err := json.Marshal(obj)
	must(err)
	var out any
	must(json.Unmarshal(data, &out))
	return out
}

func runCase(in input) output {
	out := output{Jobs: []any{}, Services: []any{}, Pods: []any{}}
	var stored []*batchv1.Job
	for _, raw := range in.Jobs {
		j := createJob(raw)
		stored = append(stored, j)
		out.Jobs = append(out.Jobs, toMap(j))
	}
	pods, err := runController(stored)
	if err != nil {
		out.Errors = append(out.Errors, err.Error())
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	out.Errors = append(out.Errors, admitPods(pods)...)
	for i := range pods {
		pods[i].APIVersion, pods[i].Kind = "v1", "Pod"
		pods[i].ResourceVersion = ""
		out.Pods = append(out.Pods, toMap(&pods[i]))
	}
	for _, raw := range in.Services {
		var svc corev1.Service
		must(json.Unmarshal(raw, &svc))
		legacyscheme.Scheme.Default(&svc)
		svc.UID = uid("Service", svc.Namespace, svc.Name)
		svc.APIVersion, svc.Kind = "v1", "Service"
		out.Services = append(out.Services, toMap(&svc))
	}
	return out
}

func main() {
	var cases []input
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintf(os.Stderr, "kube-oracle: reading the input: %v\n", err)
		os.Exit(2)
	}
	outs := make([]output, 0, len(cases))
	for _, c := range cases {
		outs = append(outs, runCase(c))
	}
	must(json.NewEncoder(os.Stdout).Encode(outs))
}
