// Command quantitycheck answers quantity questions with the real Kubernetes code.
//
// It reads one JSON request per line on stdin and writes one JSON answer per line on
// stdout. Operations: parse, manifest, add, mul, cmp, value, pod, sum (see request).
// trainc's differential tests (tests/conformance/test_quantity_differential.py) drive it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	resourcehelpers "k8s.io/component-helpers/resource"
)

type podSet struct {
	Spec  json.RawMessage `json:"spec"`
	Count int32           `json:"count"`
}

type request struct {
	Op        string          `json:"op"`
	S         string          `json:"s"`
	JSON      json.RawMessage `json:"json"`
	Qs        []string        `json:"qs"`
	N         int64           `json:"n"`
	A         string          `json:"a"`
	B         string          `json:"b"`
	Spec      json.RawMessage `json:"spec"`
	PodSets   []podSet        `json:"podsets"`
	Passes    int             `json:"passes"`
	Roundtrip bool            `json:"roundtrip"`
}

type qty struct {
	Str    string `json:"str"`
	Format string `json:"format"`
	Big    bool   `json:"big"`
}

type response struct {
	Err      string           `json:"err,omitempty"`
	Q        *qty             `json:"q,omitempty"`
	Cmp      *int             `json:"cmp,omitempty"`
	Value    *int64           `json:"value,omitempty"`
	Milli    *int64           `json:"milli,omitempty"`
	Requests map[string]qty   `json:"requests,omitempty"`
	Passes   []map[string]qty `json:"passes,omitempty"`
}

// describe reports the printed form, the format and whether the value is held as inf.Dec
// (read through reflection: the field is unexported).
func describe(q resource.Quantity) qty {
	big := !reflect.ValueOf(&q).Elem().FieldByName("d").Field(0).IsNil()
	return qty{Str: q.String(), Format: string(q.Format), Big: big}
}

func describeList(list v1.ResourceList) map[string]qty {
	out := make(map[string]qty, len(list))
	for name, q := range list {
		out[string(name)] = describe(q)
	}
	return out
}

// asStored mimics kubectl plus the API server: numbers become int64 when they fit and
// float64 otherwise, then everything is encoded again as JSON.
func asStored(raw []byte) ([]byte, error) {
	var generic interface{}
	if err := utiljson.Unmarshal(raw, &generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

func decodePodSpec(raw []byte, roundtrip bool) (v1.PodSpec, error) {
	var spec v1.PodSpec
	stored, err := asStored(raw)
	if err != nil {
		return spec, err
	}
	if err := json.Unmarshal(stored, &spec); err != nil {
		return spec, err
	}
	if roundtrip {
		again, err := json.Marshal(spec)
		if err != nil {
			return spec, err
		}
		spec = v1.PodSpec{}
		if err := json.Unmarshal(again, &spec); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

func requestsOf(raw []byte, roundtrip bool) (v1.ResourceList, error) {
	spec, err := decodePodSpec(raw, roundtrip)
	if err != nil {
		return nil, err
	}
	return resourcehelpers.PodRequests(&v1.Pod{Spec: spec}, resourcehelpers.PodResourcesOptions{}), nil
}

func handle(req request) (resp response) {
	defer func() {
		if r := recover(); r != nil {
			resp = response{Err: fmt.Sprintf("panic: %v", r)}
		}
	}()
	switch req.Op {
	case "parse":
		q, err := resource.ParseQuantity(req.S)
		if err != nil {
			return response{Err: err.Error()}
		}
		d := describe(q)
		return response{Q: &d}
	case "manifest":
		stored, err := asStored(req.JSON)
		if err != nil {
			return response{Err: err.Error()}
		}
		var q resource.Quantity
		if err := json.Unmarshal(stored, &q); err != nil {
			return response{Err: err.Error()}
		}
		d := describe(q)
		return response{Q: &d}
	case "add":
		var total resource.Quantity
		for _, s := range req.Qs {
			q, err := resource.ParseQuantity(s)
			if err != nil {
				return response{Err: err.Error()}
			}
			total.Add(q)
		}
		d := describe(total)
		return response{Q: &d}
	case "mul":
		q, err := resource.ParseQuantity(req.S)
		if err != nil {
			return response{Err: err.Error()}
		}
		q.Mul(req.N)
		d := describe(q)
		return response{Q: &d}
	case "cmp":
		a, err := resource.ParseQuantity(req.A)
		if err != nil {
			return response{Err: err.Error()}
		}
		b, err := resource.ParseQuantity(req.B)
		if err != nil {
			return response{Err: err.Error()}
		}
		c := a.Cmp(b)
		return response{Cmp: &c}
	case "value":
		q, err := resource.ParseQuantity(req.S)
		if err != nil {
			return response{Err: err.Error()}
		}
		v, m := q.Value(), q.MilliValue()
		return response{Value: &v, Milli: &m}
	case "pod":
		reqs, err := requestsOf(req.Spec, req.Roundtrip)
		if err != nil {
			return response{Err: err.Error()}
		}
		return response{Requests: describeList(reqs)}
	case "sum":
		// The PodGroup aggregation, run `passes` times over the same PodSets, the way the
		// coscheduling and Volcano plugins each run it on one shared runtime.Info.
		lists := make([]v1.ResourceList, len(req.PodSets))
		for i, ps := range req.PodSets {
			reqs, err := requestsOf(ps.Spec, req.Roundtrip)
			if err != nil {
				return response{Err: err.Error()}
			}
			lists[i] = reqs
		}
		var passes []map[string]qty
		for pass := 0; pass < req.Passes; pass++ {
			totals := v1.ResourceList{}
			for i, ps := range req.PodSets {
				for name, each := range lists[i] {
					each.Mul(int64(ps.Count))
					running := totals[name]
					running.Add(each)
					totals[name] = running
				}
			}
			passes = append(passes, describeList(totals))
		}
		return response{Passes: passes}
	}
	return response{Err: "unknown op " + req.Op}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		var resp response
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp = response{Err: "bad request: " + err.Error()}
		} else {
			resp = handle(req)
		}
		if err := enc.Encode(resp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := out.Flush(); err != nil {
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
