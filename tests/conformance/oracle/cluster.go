package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	jobruntime "github.com/kubeflow/trainer/v2/pkg/runtime"
)

// newScheme holds every API type the Trainer controller reads or writes.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(trainer.AddToScheme(s))
	utilruntime.Must(jobsetv1alpha2.AddToScheme(s))
	utilruntime.Must(schedulerpluginsv1alpha1.AddToScheme(s))
	addVolcanoScheme(s)
	return s
}

// cluster is an emulated cluster: a controller-runtime fake client holding
// the admitted objects, and the upstream runtime registry wired to it.
type cluster struct {
	client   client.WithWatch
	runtimes map[string]jobruntime.Runtime
}

// newCluster builds a fresh fake cluster holding deep copies of the admitted
// runtimes and built-in objects, plus extra objects, and the Trainer runtimes
// (and so a fresh plugin framework) on top of it. The controller
// configuration is upstream's defaulted Configuration.
func (s *session) newCluster(ctx context.Context, extra ...client.Object) (*cluster, error) {
	var objs []client.Object
	for _, o := range append(append([]client.Object{}, s.clusterObjects...), extra...) {
		objs = append(objs, o.DeepCopyObject().(client.Object))
	}
	// Same RESTMapper as the fake client would create by default.
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{})
	builder := fake.NewClientBuilder().WithScheme(s.scheme).WithRESTMapper(mapper).WithObjects(objs...)

	// The runtimes register field indexes while they are constructed, and the
	// fake client only honours indexes registered before Build. So the
	// runtimes get a client whose backing fake client is built afterwards.
	late := &lateClient{scheme: s.scheme, mapper: mapper}
	runtimes, err := newRuntimes(ctx, late, &builderIndexer{builder: builder})
	if err != nil {
		return nil, fmt.Errorf("initializing runtimes: %w", err)
	}
	late.WithWatch = builder.Build()
	return &cluster{client: late.WithWatch, runtimes: runtimes}, nil
}

// lateClient forwards to a fake client that is set once built; Scheme and
// RESTMapper (all the plugins use while being constructed) work before that.
type lateClient struct {
	client.WithWatch
	scheme *runtime.Scheme
	mapper meta.RESTMapper
}

func (c *lateClient) Scheme() *runtime.Scheme     { return c.scheme }
func (c *lateClient) RESTMapper() meta.RESTMapper { return c.mapper }

// builderIndexer registers field indexes on the fake client builder.
type builderIndexer struct{ builder *fake.ClientBuilder }

func (b *builderIndexer) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if obj == nil || field == "" || extract == nil {
		return fmt.Errorf("invalid index %q", field)
	}
	b.builder.WithIndex(obj, field, extract)
	return nil
}
