// Command v1oracle runs the Training Operator v1 (v1.9.4) and the MPI Operator
// (v0.7.0) code paths that build the pods of a job, without a cluster: each
// operator's own defaulting, validation and pod construction. It reads a JSON
// array of {"id": ..., "object": {...}} on stdin and writes a JSON array of
// {"id": ..., "error": "..."} or {"id": ..., "pods": [...], "files": {...}}.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

type request struct {
	ID     string          `json:"id"`
	Object json.RawMessage `json:"object"`
	// The operator's --gang-scheduler-name: "" (off), "volcano" or a scheduler-plugins name.
	GangScheduler string `json:"gangScheduler,omitempty"`
}

type result struct {
	ID string `json:"id"`
	// The rejection of the operator's validation (the webhook, or the MPI controller's check).
	Error string `json:"error,omitempty"`
	// Warnings the webhook returns with an accepted job.
	Warnings []string `json:"warnings,omitempty"`
	Pods     []any    `json:"pods,omitempty"`
	// Files the pods see through ConfigMaps the operator writes (the MPI hostfile).
	Files map[string]string `json:"files,omitempty"`
	// Headless Services the operator creates (name -> pod name it selects).
	Services map[string]string `json:"services,omitempty"`
	// The Jobs the operator creates (the MPI Operator's launcher), their spec without
	// the pod template: backoffLimit, activeDeadlineSeconds, ttlSecondsAfterFinished,
	// suspend, as the operator sets them (nil is left to the API server's defaults).
	Jobs map[string]any `json:"jobs,omitempty"`
}

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	var requests []request
	if err := json.Unmarshal(data, &requests); err != nil {
		fail(err)
	}
	results := make([]result, 0, len(requests))
	for _, req := range requests {
		results = append(results, run(req))
	}
	out, err := json.Marshal(results)
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(out)
	os.Stdout.Write([]byte("\n"))
}

func run(req request) (res result) {
	res.ID = req.ID
	defer func() {
		if r := recover(); r != nil {
			res = result{ID: req.ID, Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	var h header
	if err := json.Unmarshal(req.Object, &h); err != nil {
		return result{ID: req.ID, Error: err.Error()}
	}
	switch {
	case h.APIVersion == "kubeflow.org/v2beta1" && h.Kind == "MPIJob":
		return runMPIv2(req.ID, req.Object)
	case h.APIVersion == "kubeflow.org/v1" && h.Kind == "MPIJob":
		return runMPIv1(req.ID, req.Object, req.GangScheduler)
	case h.APIVersion == "kubeflow.org/v1":
		return runGeneric(req.ID, h.Kind, req.Object, req.GangScheduler)
	}
	return result{ID: req.ID, Error: fmt.Sprintf("unsupported kind %s %s", h.APIVersion, h.Kind)}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "v1oracle:", err)
	os.Exit(1)
}
