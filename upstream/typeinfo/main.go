// Command typeinfo prints, as JSON, how encoding/json sees the Go types behind the
// objects trainc renders, so that Python can reproduce a typed JSON round trip
// (json.Unmarshal into the Go type, then json.Marshal) without running Go.
//
// Output (stdout):
//
//	{
//	  "version": 1,
//	  "roots": {"TrainJob": "trainer.v1alpha1.TrainJob", ...},
//	  "types": {
//	    "io.k8s.api.core.v1.PodSpec": {
//	      "goType": "k8s.io/api/core/v1.PodSpec",
//	      "kind": "struct",
//	      "fields": [
//	        {"json": "volumes", "goName": "Volumes", "omitempty": true,
//	         "type": {"kind": "slice", "elem": {"kind": "struct", "name": "io.k8s.api.core.v1.Volume"}},
//	         "patchStrategy": "merge,retainKeys", "patchMergeKey": "name"},
//	        ...
//	      ]
//	    },
//	    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
//	      "goType": "k8s.io/apimachinery/pkg/api/resource.Quantity",
//	      "kind": "special", "special": "resource.Quantity", "isZero": true
//	    }
//	  }
//	}
//
// Type names: the Go package path plus type name, rewritten the way the Trainer's
// OpenAPI generator names its definitions (hack/swagger): the prefixes
// "github.com/kubeflow/trainer/v2/pkg/apis/", "sigs.k8s.io/jobset/api/",
// "volcano.sh/apis/pkg/apis/" and (added here) "sigs.k8s.io/scheduler-plugins/apis/"
// are dropped, "k8s.io" becomes "io.k8s" and "/" becomes ".". So a name equals the
// OpenAPI definition name wherever one exists: io.k8s.api.core.v1.PodSpec,
// jobset.v1alpha2.JobSetSpec, trainer.v1alpha1.TrainJobSpec, scheduling.v1beta1.PodGroup
// (Volcano), scheduling.v1alpha1.PodGroup (scheduler-plugins).
//
// Fields are listed as encoding/json resolves them: fields of embedded structs
// without a JSON name are promoted into the embedding struct (their Go field chain
// is in "embedded"; "embeddedPointer" is true when a link of the chain is a
// pointer), name conflicts are settled by depth and tags, and the order is Go
// declaration order (= json.Marshal output order).
//
// A type whose JSON form is custom (it or its pointer implements json.Marshaler,
// json.Unmarshaler, encoding.TextMarshaler or encoding.TextUnmarshaler) is
// "kind": "special" and is not looked into.
//
// Type reference kinds: pointer(elem), slice(elem), bytes ([]byte, base64 in
// JSON), array(len, elem), map(key, elem), struct(name), special(name, special),
// string, bool, int(bits), uint(bits), float(bits), interface(empty).
package main

import (
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
)

// roots are the top-level objects; every type reachable from them is described.
var roots = []struct {
	label string
	value any
}{
	{"TrainJob", trainer.TrainJob{}},
	{"TrainingRuntime", trainer.TrainingRuntime{}},
	{"ClusterTrainingRuntime", trainer.ClusterTrainingRuntime{}},
	{"JobSet", jobsetv1alpha2.JobSet{}},
	{"PodGroup.scheduler-plugins", schedpluginsv1alpha1.PodGroup{}},
	{"PodGroup.volcano", volcanov1beta1.PodGroup{}},
	{"ConfigMap", corev1.ConfigMap{}},
	{"Secret", corev1.Secret{}},
	{"Pod", corev1.Pod{}},
	{"Job", batchv1.Job{}},
}

var namePrefixes = []string{
	"github.com/kubeflow/trainer/v2/pkg/apis/",
	"sigs.k8s.io/jobset/api/",
	"volcano.sh/apis/pkg/apis/",
	"sigs.k8s.io/scheduler-plugins/apis/",
}

// typeName gives the stable name of a named Go type (see the package comment).
func typeName(t reflect.Type) string {
	name := t.PkgPath() + "." + t.Name()
	for _, prefix := range namePrefixes {
		name = strings.ReplaceAll(name, prefix, "")
	}
	name = strings.ReplaceAll(name, "k8s.io", "io.k8s")
	return strings.ReplaceAll(name, "/", ".")
}

func goTypeName(t reflect.Type) string {
	if t.Name() == "" {
		return ""
	}
	if t.PkgPath() == "" {
		return t.Name()
	}
	return t.PkgPath() + "." + t.Name()
}

// shortName is the conventional qualified name of a special type:
// "resource.Quantity", "metav1.Time", "intstr.IntOrString", "runtime.RawExtension".
func shortName(t reflect.Type) string {
	pkg := t.PkgPath()
	if pkg == "k8s.io/apimachinery/pkg/apis/meta/v1" {
		return "metav1." + t.Name()
	}
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	return pkg + "." + t.Name()
}

type typeRef struct {
	Kind    string   `json:"kind"`
	Name    string   `json:"name,omitempty"`
	Special string   `json:"special,omitempty"`
	GoType  string   `json:"goType,omitempty"`
	Bits    int      `json:"bits,omitempty"`
	Len     int      `json:"len,omitempty"`
	Empty   *bool    `json:"empty,omitempty"`
	Key     *typeRef `json:"key,omitempty"`
	Elem    *typeRef `json:"elem,omitempty"`
}

type fieldInfo struct {
	JSON            string   `json:"json"`
	GoName          string   `json:"goName"`
	OmitEmpty       bool     `json:"omitempty"`
	OmitZero        bool     `json:"omitzero"`
	Quoted          bool     `json:"quoted,omitempty"`
	Embedded        []string `json:"embedded,omitempty"`
	EmbeddedPointer bool     `json:"embeddedPointer,omitempty"`
	Type            *typeRef `json:"type"`
	PatchStrategy   string   `json:"patchStrategy,omitempty"`
	PatchMergeKey   string   `json:"patchMergeKey,omitempty"`
}

type typeInfo struct {
	GoType  string        `json:"goType"`
	Kind    string        `json:"kind"`
	Special string        `json:"special,omitempty"`
	IsZero  bool          `json:"isZero,omitempty"`
	Fields  *[]*fieldInfo `json:"fields,omitempty"` // present (maybe empty) for structs
}

type output struct {
	Version int                  `json:"version"`
	Roots   map[string]string    `json:"roots"`
	Types   map[string]*typeInfo `json:"types"`
}

var (
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	isZeroer        = reflect.TypeFor[interface{ IsZero() bool }]()
)

func implementsAny(t reflect.Type, ifaces ...reflect.Type) bool {
	for _, iface := range ifaces {
		if t.Implements(iface) || reflect.PointerTo(t).Implements(iface) {
			return true
		}
	}
	return false
}

func isSpecial(t reflect.Type) bool {
	return t.Name() != "" && implementsAny(t, jsonMarshaler, jsonUnmarshaler, textMarshaler, textUnmarshaler)
}

type collector struct {
	types   map[string]*typeInfo
	goNames map[string]string
}

func (c *collector) ref(t reflect.Type) *typeRef {
	if isSpecial(t) {
		name := typeName(t)
		c.register(name, t, func() *typeInfo {
			return &typeInfo{GoType: goTypeName(t), Kind: "special", Special: shortName(t), IsZero: implementsAny(t, isZeroer)}
		})
		return &typeRef{Kind: "special", Name: name, Special: shortName(t)}
	}
	r := &typeRef{GoType: goTypeName(t)}
	switch t.Kind() {
	case reflect.Pointer:
		r.Kind, r.Elem = "pointer", c.ref(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !isSpecial(t.Elem()) {
			r.Kind = "bytes"
		} else {
			r.Kind, r.Elem = "slice", c.ref(t.Elem())
		}
	case reflect.Array:
		r.Kind, r.Len, r.Elem = "array", t.Len(), c.ref(t.Elem())
	case reflect.Map:
		r.Kind, r.Key, r.Elem = "map", c.ref(t.Key()), c.ref(t.Elem())
	case reflect.Struct:
		name := typeName(t)
		if t.Name() == "" {
			panic(fmt.Sprintf("anonymous struct type %v is not supported", t))
		}
		r.Kind, r.Name, r.GoType = "struct", name, ""
		c.register(name, t, func() *typeInfo { return c.describeStruct(t) })
	case reflect.String:
		r.Kind = "string"
	case reflect.Bool:
		r.Kind = "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		r.Kind, r.Bits = "int", t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		r.Kind, r.Bits = "uint", t.Bits()
	case reflect.Float32, reflect.Float64:
		r.Kind, r.Bits = "float", t.Bits()
	case reflect.Interface:
		empty := t.NumMethod() == 0
		r.Kind, r.Empty = "interface", &empty
	default:
		panic(fmt.Sprintf("unsupported kind %v of %v", t.Kind(), t))
	}
	return r
}

// register describes a named type once; a placeholder guards against recursion.
func (c *collector) register(name string, t reflect.Type, describe func() *typeInfo) {
	if prev, ok := c.goNames[name]; ok {
		if prev != goTypeName(t) {
			panic(fmt.Sprintf("type name %s is used by both %s and %s", name, prev, goTypeName(t)))
		}
		return
	}
	c.goNames[name] = goTypeName(t)
	c.types[name] = &typeInfo{}
	*c.types[name] = *describe()
}

func (c *collector) describeStruct(t reflect.Type) *typeInfo {
	fields := []*fieldInfo{}
	info := &typeInfo{GoType: goTypeName(t), Kind: "struct", IsZero: implementsAny(t, isZeroer), Fields: &fields}
	for _, f := range jsonFields(t) {
		sf := f.field
		fi := &fieldInfo{
			JSON:          f.name,
			GoName:        sf.Name,
			OmitEmpty:     f.omitEmpty,
			OmitZero:      f.omitZero,
			Quoted:        f.quoted,
			Embedded:      f.chain,
			Type:          c.ref(sf.Type),
			PatchStrategy: sf.Tag.Get("patchStrategy"),
			PatchMergeKey: sf.Tag.Get("patchMergeKey"),
		}
		fi.EmbeddedPointer = f.viaPointer
		fields = append(fields, fi)
	}
	return info
}

// jsonField is one field as encoding/json resolves it.
type jsonField struct {
	name       string
	tagged     bool
	index      []int
	field      reflect.StructField
	chain      []string // Go names of the embedded structs leading to the field
	viaPointer bool
	omitEmpty  bool
	omitZero   bool
	quoted     bool
}

// jsonFields applies encoding/json's field visibility rules: breadth-first over
// embedded structs, skipping unexported and `json:"-"` fields, keeping for each
// JSON name the shallowest field (a tagged one wins a tie; an unresolved tie hides
// the name), in Go declaration order.
func jsonFields(t reflect.Type) []jsonField {
	type level struct {
		typ        reflect.Type
		index      []int
		chain      []string
		viaPointer bool
	}
	current := []level{}
	next := []level{{typ: t}}
	count, nextCount := map[reflect.Type]int{}, map[reflect.Type]int{}
	visited := map[reflect.Type]bool{}
	var fields []jsonField
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, lv := range current {
			if visited[lv.typ] {
				continue
			}
			visited[lv.typ] = true
			for i := 0; i < lv.typ.NumField(); i++ {
				sf := lv.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(append([]int{}, lv.index...), i)
				ft := sf.Type
				isPtr := false
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
					isPtr = true
				}
				hasOpt := func(o string) bool {
					for _, s := range strings.Split(opts, ",") {
						if s == o {
							return true
						}
					}
					return false
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					jf := jsonField{
						name:       name,
						tagged:     name != "",
						index:      index,
						field:      sf,
						chain:      append([]string{}, lv.chain...),
						viaPointer: lv.viaPointer,
						omitEmpty:  hasOpt("omitempty"),
						omitZero:   hasOpt("omitzero"),
					}
					if jf.name == "" {
						jf.name = sf.Name
					}
					if hasOpt("string") {
						switch ft.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
							reflect.Float32, reflect.Float64, reflect.String:
							jf.quoted = true
						}
					}
					if len(jf.chain) == 0 {
						jf.chain = nil
					}
					fields = append(fields, jf)
					if count[lv.typ] > 1 {
						// Two embedded copies of the same type at one depth annihilate.
						fields = append(fields, fields[len(fields)-1])
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, level{
						typ:        ft,
						index:      index,
						chain:      append(append([]string{}, lv.chain...), sf.Name),
						viaPointer: lv.viaPointer || isPtr,
					})
				}
			}
		}
	}
	sort.SliceStable(fields, func(i, j int) bool {
		if fields[i].name != fields[j].name {
			return fields[i].name < fields[j].name
		}
		if len(fields[i].index) != len(fields[j].index) {
			return len(fields[i].index) < len(fields[j].index)
		}
		if fields[i].tagged != fields[j].tagged {
			return fields[i].tagged
		}
		return lessIndex(fields[i].index, fields[j].index)
	})
	var out []jsonField
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if dominant, ok := dominantField(fields[i:j]); ok {
			out = append(out, dominant)
		}
		i = j
	}
	sort.Slice(out, func(i, j int) bool { return lessIndex(out[i].index, out[j].index) })
	return out
}

func dominantField(fields []jsonField) (jsonField, bool) {
	if len(fields) > 1 && len(fields[0].index) == len(fields[1].index) && fields[0].tagged == fields[1].tagged {
		return jsonField{}, false
	}
	return fields[0], true
}

func lessIndex(a, b []int) bool {
	for k := range a {
		if k >= len(b) {
			return false
		}
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return len(a) < len(b)
}

func main() {
	c := &collector{types: map[string]*typeInfo{}, goNames: map[string]string{}}
	out := output{Version: 1, Roots: map[string]string{}, Types: c.types}
	for _, root := range roots {
		r := c.ref(reflect.TypeOf(root.value))
		out.Roots[root.label] = r.Name
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "typeinfo:", err)
		os.Exit(1)
	}
}
