// Command kueue-oracle answers, with the pinned Kueue release's own code, what trainc's
// compiler/queue computes: a TrainJob's or a JobSet's Workload (its integrations' PodSets,
// then AdjustResources and the per-PodSet total requests) and the flavor assignment of a
// Workload to a ClusterQueue on an empty cluster (the scheduler's flavorassigner).
//
// One JSON request per stdin line, one JSON answer per stdout line:
//
//	{"op": "trainjob", "trainJob": {...}, "runtime": {...}, "setup": {...}}
//	{"op": "jobset", "jobSet": {...}, "setup": {...}}
//	{"op": "assign", "podSets": [...], "clusterQueue": "name", "setup": {...}}
//	{"op": "managed", "jobSet": {...}}
//
// "setup" holds LimitRanges, RuntimeClasses, Kueue's Configuration.resources and the
// queue objects (ResourceFlavors, ClusterQueues, Cohorts). Answers: {"podSets": [{"name",
// "count", "requests": {resource: Kueue's int64 value}}], "template": [...]} or {"mode",
// "message", "inactive"}, or for "managed" what Kueue's JobSet integration makes of a
// JobSet applied as is: {"queueName", "suspended", "shouldSuspend", "invalid"}; {"error":
// "..."} when Kueue's code returns an error.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	kftrainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	config "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	workloadjobset "sigs.k8s.io/kueue/pkg/controller/jobs/jobset"
	"sigs.k8s.io/kueue/pkg/controller/jobs/trainjob"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/scheduler/flavorassigner"
	preemptioncommon "sigs.k8s.io/kueue/pkg/scheduler/preemption/common"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	"sigs.k8s.io/kueue/pkg/workload"
)

type setup struct {
	LimitRanges     []corev1.LimitRange    `json:"limitRanges"`
	RuntimeClasses  []nodev1.RuntimeClass  `json:"runtimeClasses"`
	Resources       config.Resources       `json:"resources"`
	ResourceFlavors []kueue.ResourceFlavor `json:"resourceFlavors"`
	ClusterQueues   []kueue.ClusterQueue   `json:"clusterQueues"`
	Cohorts         []kueue.Cohort         `json:"cohorts"`
}

type request struct {
	Op           string              `json:"op"`
	TrainJob     *kftrainer.TrainJob `json:"trainJob"`
	Runtime      json.RawMessage     `json:"runtime"`
	JobSet       *jobsetapi.JobSet   `json:"jobSet"`
	PodSets      []kueue.PodSet      `json:"podSets"`
	ClusterQueue string              `json:"clusterQueue"`
	Setup        setup               `json:"setup"`
}

type podSetAnswer struct {
	Name     string           `json:"name"`
	Count    int32            `json:"count"`
	Requests map[string]int64 `json:"requests"`
}

type answer struct {
	QueueName     string         `json:"queueName,omitempty"`
	Suspended     bool           `json:"suspended,omitempty"`
	ShouldSuspend bool           `json:"shouldSuspend,omitempty"`
	Invalid       []string       `json:"invalid,omitempty"`
	PodSets       []podSetAnswer `json:"podSets,omitempty"`
	Workload      []kueue.PodSet `json:"workload,omitempty"`
	Mode          string         `json:"mode,omitempty"`
	Message       string         `json:"message,omitempty"`
	Inactive      bool           `json:"inactive,omitempty"`
	Error         string         `json:"error,omitempty"`
}

func clientObjects(s setup, extra ...client.Object) []client.Object {
	objs := append([]client.Object{}, extra...)
	for i := range s.LimitRanges {
		objs = append(objs, &s.LimitRanges[i])
	}
	for i := range s.RuntimeClasses {
		objs = append(objs, &s.RuntimeClasses[i])
	}
	return objs
}

func builder(objs []client.Object) *fake.ClientBuilder {
	return utiltesting.NewClientBuilder(kftrainer.AddToScheme, jobsetapi.AddToScheme, nodev1.AddToScheme).
		WithObjects(objs...).
		WithIndex(&corev1.LimitRange{}, indexer.LimitRangeHasContainerType, indexer.IndexLimitRangeHasContainerType)
}

// workloadOf runs what the job reconciler does after PodSets: AdjustResources, then
// NewInfo with the Configuration's excluded prefixes and transformations.
func workloadOf(ctx context.Context, c client.Client, name, namespace string, podSets []kueue.PodSet, s setup) answer {
	wl := &kueue.Workload{}
	wl.Name, wl.Namespace = name, namespace
	wl.Spec.PodSets = podSets
	workload.AdjustResources(ctx, c, wl)
	info := workload.NewInfo(wl,
		workload.WithExcludedResourcePrefixes(s.Resources.ExcludeResourcePrefixes),
		workload.WithResourceTransformations(s.Resources.Transformations))
	out := answer{Workload: wl.Spec.PodSets}
	for _, ps := range info.TotalRequests {
		reqs := map[string]int64{}
		for r, v := range ps.Requests {
			reqs[string(r)] = v
		}
		out.PodSets = append(out.PodSets, podSetAnswer{string(ps.Name), ps.Count, reqs})
	}
	return out
}

func defaultResources(s *setup) {
	// Kueue's Configuration defaulting: a transformation's strategy defaults to Retain.
	for i := range s.Resources.Transformations {
		if s.Resources.Transformations[i].Strategy == nil {
			retain := config.Retain
			s.Resources.Transformations[i].Strategy = &retain
		}
	}
}

func trainJobWorkload(ctx context.Context, r request) answer {
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(r.Runtime, &kind); err != nil {
		return answer{Error: err.Error()}
	}
	var runtimeObj client.Object
	if kind.Kind == "ClusterTrainingRuntime" {
		runtimeObj = &kftrainer.ClusterTrainingRuntime{}
	} else {
		runtimeObj = &kftrainer.TrainingRuntime{}
	}
	if err := json.Unmarshal(r.Runtime, runtimeObj); err != nil {
		return answer{Error: err.Error()}
	}
	b := builder(clientObjects(r.Setup, runtimeObj))
	idx := utiltesting.AsIndexer(b)
	c := b.Build()
	if _, err := trainjob.NewReconciler(ctx, c, idx, &utiltesting.EventRecorder{}); err != nil {
		return answer{Error: err.Error()}
	}
	job := (*trainjob.TrainJob)(r.TrainJob)
	podSets, err := job.PodSets(ctx)
	if err != nil {
		return answer{Error: err.Error()}
	}
	return workloadOf(ctx, c, r.TrainJob.Name, r.TrainJob.Namespace, podSets, r.Setup)
}

func jobSetWorkload(ctx context.Context, r request) answer {
	c := builder(clientObjects(r.Setup)).Build()
	podSets, err := (*workloadjobset.JobSet)(r.JobSet).PodSets(ctx)
	if err != nil {
		return answer{Error: err.Error()}
	}
	// the Workload the job reconciler constructs (jobframework.NewWorkload), defaults aside
	wl := jobframework.NewWorkload(r.JobSet.Name, r.JobSet, podSets, nil)
	return workloadOf(ctx, c, wl.Name, wl.Namespace, wl.Spec.PodSets, r.Setup)
}

// noPreemption: on an empty cluster the assigner never asks (available equals the
// potential capacity), so any call is a harness error made visible.
type noPreemption struct{}

func (noPreemption) SimulatePreemption(logr.Logger, *schdcache.ClusterQueueSnapshot, workload.Info, resources.FlavorResource, int64) (preemptioncommon.PreemptionPossibility, int) {
	panic("preemption simulated on an empty cluster")
}

func assign(ctx context.Context, r request) answer {
	log := logr.Discard()
	cache := schdcache.New(utiltesting.NewFakeClient())
	flavors := map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor{}
	for i := range r.Setup.ResourceFlavors {
		rf := &r.Setup.ResourceFlavors[i]
		cache.AddOrUpdateResourceFlavor(log, rf)
		flavors[kueue.ResourceFlavorReference(rf.Name)] = rf
	}
	for i := range r.Setup.Cohorts {
		if err := cache.AddOrUpdateCohort(&r.Setup.Cohorts[i]); err != nil {
			return answer{Error: err.Error()}
		}
	}
	for i := range r.Setup.ClusterQueues {
		if err := cache.AddClusterQueue(ctx, &r.Setup.ClusterQueues[i]); err != nil {
			return answer{Error: err.Error()}
		}
	}
	snapshot, err := cache.Snapshot(ctx)
	if err != nil {
		return answer{Error: err.Error()}
	}
	cq := snapshot.ClusterQueue(kueue.ClusterQueueReference(r.ClusterQueue))
	if cq == nil {
		return answer{Inactive: true}
	}
	wl := &kueue.Workload{}
	wl.Spec.PodSets = r.PodSets
	info := workload.NewInfo(wl,
		workload.WithExcludedResourcePrefixes(r.Setup.Resources.ExcludeResourcePrefixes),
		workload.WithResourceTransformations(r.Setup.Resources.Transformations))
	assignment := flavorassigner.New(info, cq, flavors, false, noPreemption{}, nil).Assign(log, nil)
	return answer{Mode: assignment.RepresentativeMode().String(), Message: assignment.Message()}
}

// managed: the queue Kueue's JobSet integration reads from a JobSet, whether the JobSet is
// suspended as delivered, whether its webhook would suspend it on create, and what its
// create validation refuses.
func managed(ctx context.Context, r request) answer {
	c := builder(nil).Build()
	job := (*workloadjobset.JobSet)(r.JobSet)
	suspend, err := jobframework.WorkloadShouldBeSuspended(ctx, r.JobSet, c, false, nil)
	if err != nil {
		return answer{Error: err.Error()}
	}
	out := answer{
		QueueName:     string(jobframework.QueueName(job)),
		Suspended:     job.IsSuspended(),
		ShouldSuspend: suspend,
	}
	for _, e := range jobframework.ValidateJobOnCreate(job) {
		out.Invalid = append(out.Invalid, e.Error())
	}
	return out
}

func handle(ctx context.Context, r request) (out answer) {
	defer func() {
		if p := recover(); p != nil {
			out = answer{Error: fmt.Sprintf("panic: %v", p)}
		}
	}()
	defaultResources(&r.Setup)
	switch r.Op {
	case "trainjob":
		return trainJobWorkload(ctx, r)
	case "jobset":
		return jobSetWorkload(ctx, r)
	case "assign":
		return assign(ctx, r)
	case "managed":
		return managed(ctx, r)
	}
	return answer{Error: "unknown op " + r.Op}
}

func main() {
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var r request
		var a answer
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			a = answer{Error: "bad request: " + err.Error()}
		} else {
			a = handle(ctx, r)
		}
		if err := out.Encode(a); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
