// Command jobset-oracle runs sigs.k8s.io/jobset v0.12.0's own code over JobSets, for
// trainc's expand conformance test (tests/pods/test_expand_oracle.py): the JobSet
// mutating and validating webhooks as controller-runtime serves them (an AdmissionReview
// through the registered handlers), then one reconcile of the JobSet controller against
// a fake client, and prints what it created (Jobs, the headless Service) as JSON.
//
// With the argument "update", it sends pairs {"old": JobSet, "new": JobSet} through the
// validating webhook as updates and prints each verdict and message.
// With the argument "pods", it sends Pods (a JSON array) through the JobSet Pod
// webhook instead and prints them as mutated.
//
// Input on stdin: a JSON array of JobSets (as the API server stores them: CRD defaults
// applied). Output on stdout: a JSON array, one result per JobSet:
//
//	{"allowed": bool, "message": "...", "defaulted": {...}, "jobs": [...], "services": [...]}
package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/jobset/pkg/controllers"
	"sigs.k8s.io/jobset/pkg/webhooks"
)

// uid is trainc's placeholder UID of an object: fixed zeros, then twelve hex digits of
// the SHA-1 of "<kind>/<namespace>/<name>" (the real one is random).
func uid(kind, namespace, name string) types.UID {
	sum := sha1.Sum([]byte(kind + "/" + namespace + "/" + name))
	return types.UID("00000000-0000-0000-0000-" + hex.EncodeToString(sum[:])[:12])
}

type result struct {
	Allowed   bool              `json:"allowed"`
	Message   string            `json:"message,omitempty"`
	Defaulted json.RawMessage   `json:"defaulted,omitempty"`
	Jobs      []json.RawMessage `json:"jobs"`
	Services  []json.RawMessage `json:"services"`
}

// stubManager is the part of a manager the webhook builder uses: a scheme, a client
// (the webhooks read PVCs only for volumeClaimPolicies) and a webhook server whose
// handlers are called in-process instead of being served.
type stubManager struct {
	manager.Manager
	scheme *runtime.Scheme
	client client.Client
	server webhook.Server
}

func (m *stubManager) GetScheme() *runtime.Scheme       { return m.scheme }
func (m *stubManager) GetClient() client.Client         { return m.client }
func (m *stubManager) GetWebhookServer() webhook.Server { return m.server }
func (m *stubManager) GetConfig() *rest.Config          { return &rest.Config{} }
func (m *stubManager) GetAPIReader() client.Reader      { return m.client }

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(s))
	must(jobset.AddToScheme(s))
	return s
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

var (
	jobSetKind     = metav1.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
	jobSetResource = metav1.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	podKind        = metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}
	podResource    = metav1.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// review sends one AdmissionReview for a JobSet create to the handler at path.
func review(server webhook.Server, path string, object []byte) admissionv1.AdmissionResponse {
	return reviewOf(server, path, object, jobSetKind, jobSetResource)
}

func reviewOf(server webhook.Server, path string, object []byte, kind metav1.GroupVersionKind, resource metav1.GroupVersionResource) admissionv1.AdmissionResponse {
	return send(server, path, &admissionv1.AdmissionRequest{
		UID:       "oracle",
		Kind:      kind,
		Resource:  resource,
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: object},
	})
}

// send posts one AdmissionReview to the handler at path, as the API server does.
func send(server webhook.Server, path string, request *admissionv1.AdmissionRequest) admissionv1.AdmissionResponse {
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  request,
	})
	must(err)
	handler, pattern := server.WebhookMux().Handler(&http.Request{Method: http.MethodPost, URL: mustURL(path)})
	if pattern != path {
		panic(fmt.Sprintf("no webhook registered at %s", path))
	}
	post := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	post.Header.Set("Content-Type", "application/json")
	recorder := httptest.NewRecorder()
	handler.ServeHTTP(recorder, post)
	var out admissionv1.AdmissionReview
	must(json.Unmarshal(recorder.Body.Bytes(), &out))
	return *out.Response
}

func runOne(raw json.RawMessage) result {
	scheme := newScheme()
	server := webhook.NewServer(webhook.Options{})
	reader := fake.NewClientBuilder().WithScheme(scheme).Build()
	must(webhooks.Setup(&stubManager{scheme: scheme, client: reader, server: server}))

	// The mutating webhook: its JSON patch applied to the object, as the API server does.
	mutated := review(server, "/mutate-jobset-x-k8s-io-v1alpha2-jobset", raw)
	object := []byte(raw)
	if len(mutated.Patch) > 0 {
		patch, err := jsonpatch.DecodePatch(mutated.Patch)
		must(err)
		object, err = patch.Apply(object)
		must(err)
	}
	if !mutated.Allowed {
		return result{Message: mutated.Result.Message}
	}
	validated := review(server, "/validate-jobset-x-k8s-io-v1alpha2-jobset", object)
	if !validated.Allowed {
		return result{Message: validated.Result.Message, Defaulted: object}
	}

	var js jobset.JobSet
	must(json.Unmarshal(object, &js))
	js.UID = uid("JobSet", js.Namespace, js.Name)
	// dependsOn and an InOrder startup hold back later replicated jobs until earlier
	// ones are ready, which a fake client never reports; neither changes how a Job is
	// built, so the oracle lifts them to see every Job the controller will create.
	// A suspended JobSet's dependencies never run, so there dependsOn stays: the
	// controller creates none of the Jobs that wait on them.
	if !ptr.Deref(js.Spec.Suspend, false) {
		for i := range js.Spec.ReplicatedJobs {
			js.Spec.ReplicatedJobs[i].DependsOn = nil
		}
	}
	js.Spec.StartupPolicy = &jobset.StartupPolicy{StartupPolicyOrder: jobset.AnyOrder}

	builder := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&js).WithStatusSubresource(&js)
	must(controllers.SetupJobSetIndexes(context.Background(), indexer{builder}))
	c := builder.Build()
	reconciler := controllers.NewJobSetReconciler(c, scheme, events.NewFakeRecorder(100))
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log)
	request := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: js.Namespace, Name: js.Name}}
	if _, err := reconciler.Reconcile(ctx, request); err != nil {
		return result{Allowed: true, Message: "reconcile: " + err.Error(), Defaulted: object}
	}
	out := result{Allowed: true, Defaulted: object, Jobs: []json.RawMessage{}, Services: []json.RawMessage{}}
	var jobs batchv1.JobList
	must(c.List(ctx, &jobs))
	sort.Slice(jobs.Items, func(i, j int) bool { return jobs.Items[i].Name < jobs.Items[j].Name })
	for i := range jobs.Items {
		out.Jobs = append(out.Jobs, clean(&jobs.Items[i], "batch/v1", "Job"))
	}
	var services corev1.ServiceList
	must(c.List(ctx, &services))
	for i := range services.Items {
		out.Services = append(out.Services, clean(&services.Items[i], "v1", "Service"))
	}
	return out
}

// clean drops what the fake client adds (resourceVersion) and sets the type meta.
func clean(obj client.Object, apiVersion, kind string) json.RawMessage {
	obj.SetResourceVersion("")
	obj.GetObjectKind().SetGroupVersionKind(schemaGVK(apiVersion, kind))
	data, err := json.Marshal(obj)
	must(err)
	return data
}

// mutatePods sends each Pod through the JobSet Pod webhook (mpod.kb.io) and applies its
// patch; the validating one (vpod.kb.io) only refuses exclusive-placement followers.
func mutatePods(input []json.RawMessage) []json.RawMessage {
	scheme := newScheme()
	server := webhook.NewServer(webhook.Options{})
	reader := fake.NewClientBuilder().WithScheme(scheme).Build()
	must(webhooks.Setup(&stubManager{scheme: scheme, client: reader, server: server}))
	out := make([]json.RawMessage, 0, len(input))
	for _, raw := range input {
		response := reviewOf(server, "/mutate--v1-pod", raw, podKind, podResource)
		object := []byte(raw)
		if len(response.Patch) > 0 {
			patch, err := jsonpatch.DecodePatch(response.Patch)
			must(err)
			object, err = patch.Apply(object)
			must(err)
		}
		out = append(out, object)
	}
	return out
}

type update struct {
	Old json.RawMessage `json:"old"`
	New json.RawMessage `json:"new"`
}

// validateUpdates sends each (old, new) pair through the validating webhook as an update.
func validateUpdates(pairs []update) []result {
	scheme := newScheme()
	server := webhook.NewServer(webhook.Options{})
	reader := fake.NewClientBuilder().WithScheme(scheme).Build()
	must(webhooks.Setup(&stubManager{scheme: scheme, client: reader, server: server}))
	out := make([]result, 0, len(pairs))
	for _, pair := range pairs {
		response := send(server, "/validate-jobset-x-k8s-io-v1alpha2-jobset", &admissionv1.AdmissionRequest{
			UID: "oracle", Kind: jobSetKind, Resource: jobSetResource, Operation: admissionv1.Update,
			Object: runtime.RawExtension{Raw: pair.New}, OldObject: runtime.RawExtension{Raw: pair.Old},
		})
		r := result{Allowed: response.Allowed}
		if response.Result != nil {
			r.Message = response.Result.Message
		}
		out = append(out, r)
	}
	return out
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "update" {
		var pairs []update
		if err := json.NewDecoder(os.Stdin).Decode(&pairs); err != nil {
			fmt.Fprintf(os.Stderr, "jobset-oracle: reading the updates: %v\n", err)
			os.Exit(2)
		}
		must(json.NewEncoder(os.Stdout).Encode(validateUpdates(pairs)))
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "pods" {
		var pods []json.RawMessage
		if err := json.NewDecoder(os.Stdin).Decode(&pods); err != nil {
			fmt.Fprintf(os.Stderr, "jobset-oracle: reading the Pods: %v\n", err)
			os.Exit(2)
		}
		must(json.NewEncoder(os.Stdout).Encode(mutatePods(pods)))
		return
	}
	var input []json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&input); err != nil {
		fmt.Fprintf(os.Stderr, "jobset-oracle: reading the JobSets: %v\n", err)
		os.Exit(2)
	}
	results := make([]result, 0, len(input))
	for _, raw := range input {
		results = append(results, runOne(raw))
	}
	encoder := json.NewEncoder(os.Stdout)
	must(encoder.Encode(results))
}
