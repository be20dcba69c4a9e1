package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
)

// The controller creates what NewObjects returns through the API server. The fake
// client of upstream's tests validates nothing, so a real cluster can refuse what
// the fake one takes: the oracle runs each created object of a kind with a known
// CRD through that CRD's create path, as kube-apiserver does, and reports a refusal
// the way the controller's TrainJobResourcesCreationFailed event does.

var (
	outputCRDsOnce sync.Once
	outputCRDs     *crdSet
	outputCRDsErr  error
)

// admitOutput returns the issues of the API server refusing o (none when it
// accepts it, or when o's kind has no known CRD: core kinds, Volcano PodGroups).
func (s *session) admitOutput(ctx context.Context, o *renderedObject) ([]issue, error) {
	outputCRDsOnce.Do(func() { outputCRDs, outputCRDsErr = loadOutputCRDs() })
	if outputCRDsErr != nil {
		return nil, outputCRDsErr
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(o.json, &u.Object); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", o, err)
	}
	cv, ok := outputCRDs.byGVK[u.GroupVersionKind()]
	if !ok {
		return nil, nil
	}
	if _, err := coerceToSchema(u, cv.structural); err != nil {
		return creationFailure(err), nil
	}
	structuraldefaulting.Default(u.Object, cv.structural)
	u.SetCreationTimestamp(placeholderCreationTimestamp)
	u.SetUID(types.UID("00000000-0000-0000-0000-000000000000"))
	reqCtx := genericapirequest.WithNamespace(ctx, u.GetNamespace())
	if err := rest.BeforeCreate(cv.strategy, reqCtx, u); err != nil {
		return creationFailure(err), nil
	}
	return nil, nil
}

// creationFailure is what the controller reports for a refused object: its event
// (the reconcile error, whole), then the API server's causes, each with its field.
func creationFailure(err error) []issue {
	event := issue{Message: "TrainJob resources reconciliation failed: " + err.Error()}
	return append([]issue{event}, errorIssues(err)...)
}
