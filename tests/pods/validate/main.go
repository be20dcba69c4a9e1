// Command validate is the differential oracle of trainc's Job and Pod validation
// (compiler/apiserver/workloads): it runs kube-apiserver v1.34.4's own create path for
// a batch/v1 Job or a v1 Pod read as JSON, as the server does for a create request:
// decode (v1 defaults applied, then converted to the internal version), the system
// metadata filled in, then rest.BeforeCreate with the registry's strategy
// (PrepareForCreate, Validate, the common metadata checks). Mutating admission is not
// run (the objects trainc validates come from controllers, after their own defaults).
// The server allows privileged containers (--allow-privileged=true).
//
// Input: one JSON object a line, {"kind": "Job"|"Pod", "object": {...}}.
// Output: one JSON object a line, {"errors": [...], "message": "..."}; "message" is
// the StatusError text the API server returns ("" when the object is accepted).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/capabilities"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/core/pod"
)

// The server draws a random UID and name suffix; the oracle and trainc use these.
const (
	placeholderUID    = "00000000-0000-4000-8000-000000000000"
	placeholderSuffix = "xxxxx"
	maxGeneratedBase  = 63 - len(placeholderSuffix)
)

type request struct {
	Kind   string          `json:"kind"`
	Object json.RawMessage `json:"object"`
}

type cause struct {
	Type   string `json:"type"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
	Text   string `json:"text"`
}

type response struct {
	Errors      []cause `json:"errors"`
	Message     string  `json:"message"`
	DecodeError string  `json:"decodeError,omitempty"`
	// The validation code panicked: kube-apiserver recovers and answers 500 with this
	// body (k8s.io/apiserver server/filters.WithPanicRecovery).
	ServerError string `json:"serverError,omitempty"`
	Panic       string `json:"panic,omitempty"`
}

const panicBody = "This request caused apiserver to panic. Look in the logs for details."

func runRecovering(req request) (resp response) {
	defer func() {
		if reason := recover(); reason != nil {
			resp = response{Errors: []cause{}, ServerError: panicBody, Panic: fmt.Sprint(reason)}
		}
	}()
	return run(req)
}

func fillSystemMeta(meta metav1.Object) {
	if meta.GetName() == "" && meta.GetGenerateName() != "" {
		base := meta.GetGenerateName()
		if len(base) > maxGeneratedBase {
			base = base[:maxGeneratedBase]
		}
		meta.SetName(base + placeholderSuffix)
	}
	if meta.GetUID() == "" {
		meta.SetUID(types.UID(placeholderUID))
	}
	meta.SetCreationTimestamp(metav1.Now())
	if meta.GetNamespace() == "" {
		meta.SetNamespace("default")
	}
}

func run(req request) response {
	decoder := legacyscheme.Codecs.UniversalDecoder()
	var wrapped map[string]any
	if err := json.Unmarshal(req.Object, &wrapped); err != nil {
		return response{DecodeError: err.Error()}
	}
	switch req.Kind {
	case "Job":
		wrapped["apiVersion"], wrapped["kind"] = "batch/v1", "Job"
	case "Pod":
		wrapped["apiVersion"], wrapped["kind"] = "v1", "Pod"
	default:
		return response{DecodeError: "unknown kind " + req.Kind}
	}
	data, _ := json.Marshal(wrapped)
	obj, _, err := decoder.Decode(data, nil, nil)
	if err != nil {
		return response{DecodeError: err.Error()}
	}
	var strategy rest.RESTCreateStrategy
	switch req.Kind {
	case "Job":
		strategy = job.Strategy
	default:
		strategy = pod.Strategy
	}
	meta, err := metaOf(obj)
	if err != nil {
		return response{DecodeError: err.Error()}
	}
	fillSystemMeta(meta)
	ctx := genericapirequest.WithNamespace(context.Background(), meta.GetNamespace())
	err = rest.BeforeCreate(strategy, ctx, obj)
	resp := response{Errors: []cause{}}
	if err == nil {
		return resp
	}
	resp.Message = err.Error()
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			resp.Errors = append(resp.Errors, cause{Type: string(c.Type), Field: c.Field, Detail: c.Message, Text: fmt.Sprintf("%s: %s", c.Field, c.Message)})
		}
	}
	return resp
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	accessor, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return accessor.GetObjectMeta(), nil
}

func main() {
	// as the live control plane's kube-apiserver (and kubeadm's): --allow-privileged=true
	capabilities.Setup(true, 0)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req request
		var resp response
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp = response{DecodeError: err.Error()}
		} else {
			resp = runRecovering(req)
		}
		if err := out.Encode(resp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
