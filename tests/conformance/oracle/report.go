package main

import (
	"encoding/json"
	"errors"
	"io"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Origins of an issue.
const (
	originDecode     = "decode"     // input is not a known API object
	originAPI        = "api"        // generic API server checks (namespace, name clash, finalizer warnings)
	originSchema     = "crd-schema" // CRD OpenAPI schema, pruning/strict fields, metadata validation
	originCEL        = "crd-cel"    // CRD x-kubernetes-validations
	originWebhook    = "webhook"    // Trainer validating admission webhooks
	originController = "controller" // Trainer controller (NewObjects)
)

// Issue types we add beside the field.ErrorType values.
const (
	typeUnknownField   = "FieldValueUnknown"
	typeStrictDecoding = "StrictDecodingError"
)

// issue is one error or warning of the JSON document.
type issue struct {
	Object   string `json:"object"`
	File     string `json:"file,omitempty"`
	Document *int   `json:"document,omitempty"`
	Origin   string `json:"origin"`
	Webhook  string `json:"webhook,omitempty"`
	Field    string `json:"field"`
	Type     string `json:"type"`
	Message  string `json:"message"`

	body string // message without the field prefix, for matching
	seq  int    // input position of the object, for ordering
}

// report is the JSON document printed by validate, and by render on rejection.
type report struct {
	Rejected bool    `json:"rejected"`
	Errors   []issue `json:"errors"`
	Warnings []issue `json:"warnings"`
}

func newReport() *report {
	return &report{Errors: []issue{}, Warnings: []issue{}}
}

func (r *report) addError(is issue) {
	r.Rejected = true
	r.Errors = append(r.Errors, is)
}

func (r *report) addWarning(is issue) {
	r.Warnings = append(r.Warnings, is)
}

// sortByInput orders errors and warnings by the input position of their object
// (issues of one object keep the order in which they were found).
func (r *report) sortByInput() {
	sort.SliceStable(r.Errors, func(i, j int) bool { return r.Errors[i].seq < r.Errors[j].seq })
	sort.SliceStable(r.Warnings, func(i, j int) bool { return r.Warnings[i].seq < r.Warnings[j].seq })
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// fieldIssue turns a field.Error into an issue (object and origin left empty).
func fieldIssue(fe *field.Error) issue {
	return issue{Field: fe.Field, Type: string(fe.Type), Message: fe.Error(), body: fe.ErrorBody()}
}

// errorIssues flattens an error returned by upstream code: aggregates of
// field errors become one issue each, anything else a single issue.
func errorIssues(err error) []issue {
	if err == nil {
		return nil
	}
	var fe *field.Error
	if errors.As(err, &fe) && fe == err {
		return []issue{fieldIssue(fe)}
	}
	if agg, ok := err.(utilerrors.Aggregate); ok {
		var out []issue
		for _, e := range agg.Errors() {
			out = append(out, errorIssues(e)...)
		}
		return out
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		if st.Details != nil && len(st.Details.Causes) > 0 {
			var out []issue
			for _, c := range st.Details.Causes {
				msg := c.Message
				if c.Field != "" {
					msg = c.Field + ": " + c.Message
				}
				out = append(out, issue{Field: c.Field, Type: string(c.Type), Message: msg, body: c.Message})
			}
			return out
		}
		return []issue{{Type: string(st.Reason), Message: st.Message}}
	}
	return []issue{{Message: err.Error()}}
}

func fieldErrorListIssues(errs field.ErrorList) []issue {
	var out []issue
	for _, fe := range errs {
		out = append(out, fieldIssue(fe))
	}
	return out
}
