package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/google/uuid"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	kjson "sigs.k8s.io/json"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	jobruntime "github.com/kubeflow/trainer/v2/pkg/runtime"
)

// Names of the upstream ValidatingWebhookConfiguration entries, used to label
// webhook issues the way the API server names the denying webhook.
const (
	webhookTrainJob               = "validator.trainjob.trainer.kubeflow.org"
	webhookTrainingRuntime        = "validator.trainingruntime.trainer.kubeflow.org"
	webhookClusterTrainingRuntime = "validator.clustertrainingruntime.trainer.kubeflow.org"
)

// Placeholders for server-set metadata that are not functions of the input.
var (
	placeholderCreationTimestamp = metav1.Unix(0, 0)
	generatedNameSuffix          = "00000"
	defaultRequestNamespace      = metav1.NamespaceDefault
)

// Built-in kinds we accept as pre-existing cluster state that are cluster scoped.
var clusterScopedKinds = map[schema.GroupKind]bool{
	{Group: "", Kind: "Namespace"}:                            true,
	{Group: "", Kind: "Node"}:                                 true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:       true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:              true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:           true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: true,
}

// entry is one input object on its way through admission.
type entry struct {
	seq        int // position among all input documents
	doc        document
	obj        *unstructured.Unstructured
	strictErrs []error
	gvk        schema.GroupVersionKind
	crd        *crdVersion // nil for objects that are not Trainer custom resources
	label      string      // "Kind namespace/name" or "Kind name"
}

func (e *entry) issue(origin string, is issue) issue {
	is.Object = e.label
	is.File = e.doc.file
	idx := e.doc.index
	is.Document = &idx
	is.Origin = origin
	is.seq = e.seq
	return is
}

// session holds the inputs and the emulated cluster state.
type session struct {
	opts     *commonOptions
	crds     *crdSet
	scheme   *runtime.Scheme
	report   *report
	ownerUID string
	entries  []*entry

	// clusterObjects are the objects that exist in the emulated cluster once
	// admission is over: accepted runtimes and pass-through built-in objects.
	clusterObjects []client.Object
	// trainJobs are the admitted TrainJobs, typed, in input order.
	trainJobs []*admittedTrainJob

	celValidators map[*crdVersion]*cel.Validator
}

type admittedTrainJob struct {
	entry *entry
	obj   *trainer.TrainJob
}

func newSession(_ context.Context, opts *commonOptions, crds *crdSet, docs []document) (*session, error) {
	s := &session{
		opts:          opts,
		crds:          crds,
		scheme:        newScheme(),
		report:        newReport(),
		ownerUID:      defaultOwnerUID,
		celValidators: map[*crdVersion]*cel.Validator{},
	}
	strict := opts.fieldValidation != "Ignore"
	for _, doc := range docs {
		u, strictErrs, err := decodeDocument(doc, strict)
		if err != nil {
			return nil, err
		}
		e := &entry{seq: len(s.entries), doc: doc, obj: u, strictErrs: strictErrs, gvk: u.GroupVersionKind()}
		e.crd = crds.byGVK[e.gvk]
		namespaced := !clusterScopedKinds[e.gvk.GroupKind()]
		if e.crd != nil {
			namespaced = e.crd.namespaced
		}
		name := u.GetName()
		if name == "" && u.GetGenerateName() != "" {
			name = u.GetGenerateName() + generatedNameSuffix
		}
		if namespaced {
			ns := u.GetNamespace()
			if ns == "" {
				ns = defaultRequestNamespace
			}
			e.label = fmt.Sprintf("%s %s/%s", e.gvk.Kind, ns, name)
		} else {
			e.label = fmt.Sprintf("%s %s", e.gvk.Kind, name)
		}
		s.entries = append(s.entries, e)
	}
	return s, nil
}

// admitAll creates every input object in the emulated cluster: built-in
// objects first, then runtimes, then TrainJobs (so a TrainJob can reference a
// runtime defined anywhere in the inputs). Issues land in s.report.
func (s *session) admitAll(ctx context.Context) {
	seen := map[string]*entry{}
	unique := func(e *entry) bool {
		key := e.gvk.GroupKind().String() + " " + e.label
		if first, dup := seen[key]; dup {
			s.report.addError(e.issue(originAPI, issue{
				Type:    "AlreadyExists",
				Message: fmt.Sprintf("%s already exists (first defined in %s)", e.label, first.doc),
			}))
			return false
		}
		seen[key] = e
		return true
	}

	for _, e := range s.entries {
		if e.crd != nil {
			continue
		}
		if _, isTrainer := s.crds.byKind[e.gvk.GroupKind()]; isTrainer || !s.scheme.Recognizes(e.gvk) {
			s.report.addError(e.issue(originDecode, issue{
				Type:    "NoKindMatch",
				Message: fmt.Sprintf("no matches for kind %q in version %q", e.gvk.Kind, e.gvk.GroupVersion().String()),
			}))
			continue
		}
		if unique(e) {
			s.addBuiltin(e)
		}
	}

	for _, e := range s.entries {
		if e.crd == nil || e.gvk.Kind == trainer.TrainJobKind {
			continue
		}
		if !unique(e) || !s.createCustomResource(ctx, e) {
			continue
		}
		var obj client.Object
		switch e.gvk.Kind {
		case trainer.TrainingRuntimeKind:
			rt := &trainer.TrainingRuntime{}
			if !s.toTyped(e, rt) {
				continue
			}
			if !s.opts.skipWebhook {
				warns, err := validateTrainingRuntime(ctx, rt.DeepCopy())
				if !s.recordWebhook(e, webhookTrainingRuntime, warns, errorIssues(err)) {
					continue
				}
			}
			obj = rt
		case trainer.ClusterTrainingRuntimeKind:
			rt := &trainer.ClusterTrainingRuntime{}
			if !s.toTyped(e, rt) {
				continue
			}
			if !s.opts.skipWebhook {
				warns, err := validateClusterTrainingRuntime(ctx, rt.DeepCopy())
				if !s.recordWebhook(e, webhookClusterTrainingRuntime, warns, errorIssues(err)) {
					continue
				}
			}
			obj = rt
		default:
			continue
		}
		s.clusterObjects = append(s.clusterObjects, obj)
	}

	var validationCluster *cluster
	for _, e := range s.entries {
		if e.crd == nil || e.gvk.Kind != trainer.TrainJobKind {
			continue
		}
		if !unique(e) || !s.createCustomResource(ctx, e) {
			continue
		}
		tj := &trainer.TrainJob{}
		if !s.toTyped(e, tj) {
			continue
		}
		if !s.opts.skipWebhook {
			if validationCluster == nil {
				c, err := s.newCluster(ctx)
				if err != nil {
					s.report.addError(e.issue(originWebhook, issue{Message: "setting up the Trainer runtimes: " + err.Error()}))
					continue
				}
				validationCluster = c
			}
			warns, issues := validationCluster.validateTrainJob(ctx, tj.DeepCopy())
			if !s.recordWebhook(e, webhookTrainJob, warns, issues) {
				continue
			}
		}
		s.trainJobs = append(s.trainJobs, &admittedTrainJob{entry: e, obj: tj})
	}
	s.report.sortByInput()
}

// validateTrainJob does what the upstream TrainJob validating webhook does on
// create: pick the runtime by its registry key and run its ValidateObjects.
func (c *cluster) validateTrainJob(ctx context.Context, tj *trainer.TrainJob) (admission.Warnings, []issue) {
	key := jobruntime.RuntimeRefToRuntimeRegistryKey(tj.Spec.RuntimeRef)
	rt, ok := c.runtimes[key]
	if !ok {
		return nil, []issue{{Message: fmt.Sprintf("unsupported runtime: %s", key)}}
	}
	return recoveredValidation(func() (admission.Warnings, []issue) {
		warns, errs := rt.ValidateObjects(ctx, nil, tj)
		return warns, fieldErrorListIssues(append(trainJobNameErrors(tj), errs...))
	})
}

// recoveredValidation runs a webhook check as controller-runtime's admission Webhook
// does (RecoverPanic defaults to true): a panic in upstream's check becomes a denial
// with the message "panic: <value> [recovered]" instead of a crash. Trainer v2.1.0's
// torchtune check dereferences an unset spec.trainer.numNodes, for one.
func recoveredValidation(check func() (admission.Warnings, []issue)) (warns admission.Warnings, issues []issue) {
	defer func() {
		if r := recover(); r != nil {
			warns, issues = nil, []issue{{Message: fmt.Sprintf("panic: %v [recovered]", r)}}
		}
	}()
	return check()
}

// recordWebhook stores webhook warnings and errors; it reports whether the
// object was admitted.
func (s *session) recordWebhook(e *entry, name string, warns admission.Warnings, issues []issue) bool {
	for _, w := range warns {
		s.report.addWarning(e.issue(originWebhook, issue{Webhook: name, Message: w}))
	}
	for _, is := range issues {
		is.Webhook = name
		s.report.addError(e.issue(originWebhook, is))
	}
	return len(issues) == 0
}

// addBuiltin records a built-in object (PriorityClass, Secret, ...) as
// pre-existing cluster state. It is not validated.
func (s *session) addBuiltin(e *entry) {
	obj, err := s.scheme.New(e.gvk)
	if err == nil {
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(e.obj.Object, obj)
	}
	cobj, ok := obj.(client.Object)
	if err != nil || !ok {
		s.report.addError(e.issue(originDecode, issue{Message: fmt.Sprintf("cannot convert to %s: %v", e.gvk, err)}))
		return
	}
	if !clusterScopedKinds[e.gvk.GroupKind()] && cobj.GetNamespace() == "" {
		cobj.SetNamespace(defaultRequestNamespace)
	}
	cobj.GetObjectKind().SetGroupVersionKind(e.gvk)
	s.clusterObjects = append(s.clusterObjects, cobj)
}

// createCustomResource emulates the API server's handling of a create request
// for a Trainer custom resource, up to (not including) the validating
// admission webhooks. It mutates e.obj into the object as it would be stored
// and reports whether the request succeeded.
func (s *session) createCustomResource(ctx context.Context, e *entry) bool {
	cv := e.crd
	u := e.obj

	// Request decoding: unknown fields are pruned (and tracked), ObjectMeta is
	// coerced, then structural defaults are applied.
	unknown, err := coerceToSchema(u, cv.structural)
	if err != nil {
		for _, is := range errorIssues(err) {
			s.report.addError(e.issue(originSchema, is))
		}
		return false
	}
	var strictIssues []issue
	for _, se := range e.strictErrs {
		strictIssues = append(strictIssues, issue{Type: typeStrictDecoding, Message: se.Error()})
	}
	for _, p := range unknown {
		strictIssues = append(strictIssues, issue{Field: p, Type: typeUnknownField, Message: fmt.Sprintf("unknown field %q", p)})
	}
	switch s.opts.fieldValidation {
	case "Strict":
		if len(strictIssues) > 0 {
			for _, is := range strictIssues {
				s.report.addError(e.issue(originSchema, is))
			}
			return false
		}
	case "Warn":
		for _, is := range strictIssues {
			s.report.addWarning(e.issue(originSchema, is))
		}
	}
	structuraldefaulting.Default(u.Object, cv.structural)

	// Server-populated metadata (placeholders: the real values are random).
	if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(u.GetGenerateName() + generatedNameSuffix)
	}
	u.SetCreationTimestamp(placeholderCreationTimestamp)
	if e.gvk.Kind == trainer.TrainJobKind {
		u.SetUID(types.UID(s.ownerUID))
	} else {
		u.SetUID(types.UID(uuid.NewSHA1(uuid.NameSpaceOID, []byte(e.label)).String()))
	}

	requestNamespace := ""
	if cv.namespaced {
		requestNamespace = u.GetNamespace()
		if requestNamespace == "" {
			requestNamespace = defaultRequestNamespace
		}
	}
	recorder := &warningRecorder{}
	reqCtx := genericapirequest.WithNamespace(ctx, requestNamespace)
	reqCtx = warning.WithWarningRecorder(reqCtx, recorder)
	createErr := rest.BeforeCreate(cv.strategy, reqCtx, u)
	for _, w := range recorder.warnings {
		s.report.addWarning(e.issue(originAPI, issue{Message: w}))
	}
	if createErr == nil {
		return true
	}

	celErrs := s.celErrorKeys(ctx, cv, u)
	for _, is := range errorIssues(createErr) {
		origin := originSchema
		if celErrs[is.Field+"\x00"+is.body] {
			origin = originCEL
		}
		s.report.addError(e.issue(origin, is))
	}
	return false
}

// celErrorKeys evaluates only the CRD's CEL rules on the object, to tell CEL
// failures apart from OpenAPI schema failures in the API server's answer.
func (s *session) celErrorKeys(ctx context.Context, cv *crdVersion, u *unstructured.Unstructured) map[string]bool {
	v, ok := s.celValidators[cv]
	if !ok {
		v = cel.NewValidator(cv.structural, true, celconfig.PerCallLimit)
		s.celValidators[cv] = v
	}
	keys := map[string]bool{}
	if v == nil {
		return keys
	}
	errs, _ := v.Validate(ctx, nil, cv.structural, u.Object, nil, celconfig.RuntimeCELCostBudget)
	for _, fe := range errs {
		keys[fe.Field+"\x00"+fe.ErrorBody()] = true
	}
	return keys
}

// coerceToSchema does what the API server's request decoder does to a custom
// resource: remember type and object metadata, prune fields unknown to the
// structural schema, drop nulls the schema does not allow, coerce the
// embedded ObjectMeta, then put type and object metadata back. It returns the
// paths of the unknown (pruned) fields.
func coerceToSchema(u *unstructured.Unstructured, st *structuralschema.Structural) ([]string, error) {
	kind := u.GetKind()
	apiVersion := u.GetAPIVersion()
	meta, hasMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{
		ReturnUnknownFieldPaths: true,
	})
	if err != nil {
		return nil, err
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, st, true, structuralschema.UnknownFieldPathOptions{
		TrackUnknownFieldPaths: true,
	})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, st)
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, st, false, schemaobjectmeta.CoerceOptions{
		ReturnUnknownFieldPaths: true,
	})
	if ferr != nil {
		return nil, ferr
	}
	unknown = append(unknown, paths...)
	u.SetKind(kind)
	u.SetAPIVersion(apiVersion)
	if hasMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, meta); err != nil {
			return nil, err
		}
	}
	sort.Strings(unknown)
	return unknown, nil
}

// toTyped converts a stored custom resource into its Go type the way a
// client decodes it from the API server (JSON, case-sensitive, unknown
// fields ignored).
func (s *session) toTyped(e *entry, into runtime.Object) bool {
	if err := unstructuredToTyped(e.obj, into); err != nil {
		s.report.addError(e.issue(originDecode, issue{Message: fmt.Sprintf("cannot decode into %T: %v", into, err)}))
		return false
	}
	return true
}

func unstructuredToTyped(u *unstructured.Unstructured, into runtime.Object) error {
	raw, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, into); err != nil {
		return err
	}
	if into.GetObjectKind().GroupVersionKind().Empty() {
		return errors.New("object has no apiVersion/kind")
	}
	return nil
}

// warningRecorder collects API server warnings (warning.Recorder).
type warningRecorder struct{ warnings []string }

func (r *warningRecorder) AddWarning(_, text string) { r.warnings = append(r.warnings, text) }
