package main

import (
	"context"
	"net/url"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// indexer registers the controller's field indexes on the fake client being built.
type indexer struct{ builder *fake.ClientBuilder }

func (i indexer) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	i.builder.WithIndex(obj, field, extract)
	return nil
}

func mustURL(path string) *url.URL {
	u, err := url.Parse(path)
	must(err)
	return u
}

func schemaGVK(apiVersion, kind string) schema.GroupVersionKind {
	gv, err := schema.ParseGroupVersion(apiVersion)
	must(err)
	return gv.WithKind(kind)
}
