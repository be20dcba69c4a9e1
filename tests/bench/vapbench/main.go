// Command vapbench evaluates ValidatingAdmissionPolicies on objects with the API
// server's own code (k8s.io/apiserver pkg/admission/plugin/policy), in one process,
// for the side-by-side figure of tests/bench/check_bench.py.
//
// Input (JSON on the file named by the first argument):
//
//	{"policies": [VAP...], "bindings": [binding...], "params": [object...],
//	 "namespaces": {"name": {"label": "value"}},
//	 "objects": [{"object": {...}, "resource": "jobsets", "namespaced": true}]}
//
// Every object is a CREATE with no old object and an empty user, as trainc check
// evaluates it. Output (one JSON line): the number of objects, of denials and warnings
// (decisions of each binding's actions), and the seconds of matching + evaluation
// alone (decoding the input is left out): the fastest of three passes after a warm-up.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

type input struct {
	Policies   []admissionv1.ValidatingAdmissionPolicy        `json:"policies"`
	Bindings   []admissionv1.ValidatingAdmissionPolicyBinding `json:"bindings"`
	Params     []map[string]any                               `json:"params"`
	Namespaces map[string]map[string]string                   `json:"namespaces"`
	Objects    []struct {
		Object     map[string]any `json:"object"`
		Resource   string         `json:"resource"`
		Namespaced bool           `json:"namespaced"`
	} `json:"objects"`
}

type compiled struct {
	policy    *admissionv1.ValidatingAdmissionPolicy
	accessor  generic.PolicyAccessor
	validator validating.Validator
	bindings  []*admissionv1.ValidatingAdmissionPolicyBinding
}

type request struct {
	versioned *admission.VersionedAttributes
	gvr       schema.GroupVersionResource
	namespace string
}

type counts struct {
	Objects   int     `json:"objects"`
	Denials   int     `json:"denials"`
	Warnings  int     `json:"warnings"`
	Audits    int     `json:"audits"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"objects_per_second"`
}

// defaults applies what the API server's defaulting sets on a created policy or binding.
func defaults(match *admissionv1.MatchResources) {
	if match == nil {
		return
	}
	if match.NamespaceSelector == nil {
		match.NamespaceSelector = &metav1.LabelSelector{}
	}
	if match.ObjectSelector == nil {
		match.ObjectSelector = &metav1.LabelSelector{}
	}
	if match.MatchPolicy == nil {
		equivalent := admissionv1.Equivalent
		match.MatchPolicy = &equivalent
	}
	all := admissionv1.AllScopes
	for _, rules := range [][]admissionv1.NamedRuleWithOperations{match.ResourceRules, match.ExcludeResourceRules} {
		for i := range rules {
			if rules[i].Scope == nil {
				rules[i].Scope = &all
			}
		}
	}
}

// compile builds a policy's validator from the exported pieces the plugin uses.
func compile(policy *admissionv1.ValidatingAdmissionPolicy) (validating.Validator, error) {
	hasParams := policy.Spec.ParamKind != nil
	withAuthz := celplugin.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	noAuthz := celplugin.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: false}
	envs := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	compiler, err := celplugin.NewCompositedCompiler(envs)
	if err != nil {
		return nil, err
	}
	variables := make([]celplugin.NamedExpressionAccessor, len(policy.Spec.Variables))
	for i, v := range policy.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(variables, withAuthz, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if n := len(policy.Spec.MatchConditions); n > 0 {
		conditions := make([]celplugin.ExpressionAccessor, n)
		for i := range policy.Spec.MatchConditions {
			conditions[i] = (*matchconditions.MatchCondition)(&policy.Spec.MatchConditions[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(conditions, withAuthz, environment.StoredExpressions),
			policy.Spec.FailurePolicy, "policy", "validate", policy.Name)
	}
	validations := make([]celplugin.ExpressionAccessor, len(policy.Spec.Validations))
	messages := make([]celplugin.ExpressionAccessor, len(policy.Spec.Validations))
	for i, v := range policy.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audits := make([]celplugin.ExpressionAccessor, len(policy.Spec.AuditAnnotations))
	for i, a := range policy.Spec.AuditAnnotations {
		audits[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	v := validating.NewValidator(
		compiler.CompileCondition(validations, withAuthz, environment.StoredExpressions),
		matcher,
		compiler.CompileCondition(audits, withAuthz, environment.StoredExpressions),
		compiler.CompileCondition(messages, noAuthz, environment.StoredExpressions),
		policy.Spec.FailurePolicy, nil)
	return v, v.CompileError()
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "vapbench:", err)
		os.Exit(2)
	}
}

// passes is how many timed passes run after the warm-up; the fastest is reported (the
// least disturbed by other processes on a shared machine).
const passes = 3

func main() {
	if len(os.Args) != 2 {
		must(fmt.Errorf("usage: vapbench INPUT.json"))
	}
	var best float64
	raw, err := os.ReadFile(os.Args[1])
	must(err)
	var in input
	must(json.Unmarshal(raw, &in))

	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for name, labels := range in.Namespaces {
		must(indexer.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}))
	}
	namespaces := corelisters.NewNamespaceLister(indexer)
	policyMatcher := generic.NewPolicyMatcher(matching.NewMatcher(namespaces, nil))
	interfaces := admission.NewObjectInterfacesFromScheme(runtime.NewScheme())

	policies := make([]*compiled, 0, len(in.Policies))
	byName := map[string]*compiled{}
	for i := range in.Policies {
		p := &in.Policies[i]
		if p.Spec.FailurePolicy == nil {
			fail := admissionv1.Fail
			p.Spec.FailurePolicy = &fail
		}
		defaults(p.Spec.MatchConstraints)
		v, err := compile(p)
		must(err)
		c := &compiled{policy: p, accessor: validating.NewValidatingAdmissionPolicyAccessor(p), validator: v}
		policies = append(policies, c)
		byName[p.Name] = c
	}
	for i := range in.Bindings {
		b := &in.Bindings[i]
		defaults(b.Spec.MatchResources)
		if c := byName[b.Spec.PolicyName]; c != nil {
			c.bindings = append(c.bindings, b)
		}
	}
	params := map[[4]string]*unstructured.Unstructured{}
	for _, p := range in.Params {
		u := &unstructured.Unstructured{Object: p}
		params[[4]string{u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName()}] = u
	}

	requests := make([]request, len(in.Objects))
	for i, o := range in.Objects {
		u := &unstructured.Unstructured{Object: o.Object}
		gvk := u.GroupVersionKind()
		gvr := gvk.GroupVersion().WithResource(o.Resource)
		namespace := ""
		if o.Namespaced {
			namespace = u.GetNamespace()
			if namespace == "" {
				namespace = "default"
			}
		}
		attr := admission.NewAttributesRecord(u, nil, gvk, namespace, u.GetName(), gvr, "", admission.Create, nil, false, nil)
		requests[i] = request{&admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk, VersionedObject: u}, gvr, namespace}
	}

	run := func() counts {
		var c counts
		ctx := context.Background()
		for _, r := range requests {
			var nsObject *corev1.Namespace
			if r.namespace != "" {
				nsObject, _ = namespaces.Get(r.namespace)
				if nsObject == nil {
					nsObject = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.namespace}}
				}
			}
			for _, p := range policies {
				matches, gvr, _, err := policyMatcher.DefinitionMatches(r.versioned, interfaces, p.accessor)
				must(err)
				if !matches {
					continue
				}
				for _, b := range p.bindings {
					ok, err := policyMatcher.BindingMatches(r.versioned, interfaces, validating.NewValidatingAdmissionPolicyBindingAccessor(b))
					must(err)
					if !ok {
						continue
					}
					var param runtime.Object
					if ref := b.Spec.ParamRef; ref != nil && p.policy.Spec.ParamKind != nil {
						ns := ref.Namespace
						if ns == "" {
							ns = r.namespace
						}
						kind := p.policy.Spec.ParamKind
						found := params[[4]string{kind.APIVersion, kind.Kind, ns, ref.Name}]
						if found == nil {
							if ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionv1.DenyAction {
								c.count(b, 1)
							}
							continue
						}
						param = found
					}
					result := p.validator.Validate(ctx, gvr, r.versioned, param, nsObject, celconfig.RuntimeCELCostBudget, nil)
					for _, d := range result.Decisions {
						if d.Action == validating.ActionDeny {
							c.count(b, 1)
						}
					}
				}
			}
		}
		c.Objects = len(requests)
		return c
	}
	run() // warm-up
	var c counts
	for pass := 0; pass < passes; pass++ {
		started := time.Now()
		c = run()
		if seconds := time.Since(started).Seconds(); pass == 0 || seconds < best {
			best = seconds
		}
	}
	c.Seconds = best
	c.PerSecond = float64(c.Objects) / c.Seconds
	out, _ := json.Marshal(c)
	fmt.Println(string(out))
}

// count adds a failed validation under the strongest of the binding's actions.
func (c *counts) count(b *admissionv1.ValidatingAdmissionPolicyBinding, n int) {
	actions := map[admissionv1.ValidationAction]bool{}
	for _, a := range b.Spec.ValidationActions {
		actions[a] = true
	}
	switch {
	case actions[admissionv1.Deny]:
		c.Denials += n
	case actions[admissionv1.Warn]:
		c.Warnings += n
	default:
		c.Audits += n
	}
}
