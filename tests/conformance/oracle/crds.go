package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

	"golang.org/x/mod/module"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/yaml"
)

const (
	trainerModulePath = "github.com/kubeflow/trainer/v2"
	crdSubdir         = "manifests/base/crds"
	crdDirEnv         = "ORACLE_CRD_DIR"
)

// locateCRDDir finds the directory with the Trainer CRD YAMLs, in this order:
// the --crd-dir flag, the ORACLE_CRD_DIR environment variable, then
// manifests/base/crds inside the module cache copy of exactly the trainer
// version this binary was linked against (so CRDs and Go code always match).
func locateCRDDir(flagValue string) (string, error) {
	if flagValue != "" {
		return checkCRDDir(flagValue)
	}
	if env := os.Getenv(crdDirEnv); env != "" {
		return checkCRDDir(env)
	}
	version, err := linkedModuleVersion(trainerModulePath)
	if err != nil {
		return "", err
	}
	escPath, err := module.EscapePath(trainerModulePath)
	if err != nil {
		return "", err
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return "", err
	}
	var tried []string
	for _, cache := range moduleCacheCandidates() {
		dir := filepath.Join(cache, filepath.FromSlash(escPath)+"@"+escVersion, filepath.FromSlash(crdSubdir))
		if d, err := checkCRDDir(dir); err == nil {
			return d, nil
		}
		tried = append(tried, dir)
	}
	return "", inputf("cannot find the Trainer %s CRDs (tried %s); run `go mod download` in the oracle module or pass --crd-dir",
		version, strings.Join(tried, ", "))
}

func checkCRDDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for _, name := range crdFileNames {
		if _, err := os.Stat(filepath.Join(abs, name)); err != nil {
			return "", inputf("CRD directory %s: %v", abs, err)
		}
	}
	return abs, nil
}

// moduleCacheCandidates lists plausible GOMODCACHE locations, best first.
func moduleCacheCandidates() []string {
	var out []string
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p == "" {
			return
		}
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	add(os.Getenv("GOMODCACHE"))
	if goBin, err := exec.LookPath("go"); err == nil {
		if b, err := exec.Command(goBin, "env", "GOMODCACHE").Output(); err == nil {
			add(string(b))
		}
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		add(filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		add(filepath.Join(home, "go", "pkg", "mod"))
	}
	return out
}

// linkedModuleVersion returns the version of a dependency linked into this binary.
func linkedModuleVersion(path string) (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("no build information in the binary")
	}
	for _, dep := range info.Deps {
		if dep.Path != path {
			continue
		}
		if dep.Replace != nil {
			if dep.Replace.Version == "" {
				return "", fmt.Errorf("%s is replaced by a local directory; pass --crd-dir", path)
			}
			return dep.Replace.Version, nil
		}
		return dep.Version, nil
	}
	return "", fmt.Errorf("%s is not linked into this binary", path)
}

var crdFileNames = []string{
	"trainer.kubeflow.org_trainjobs.yaml",
	"trainer.kubeflow.org_trainingruntimes.yaml",
	"trainer.kubeflow.org_clustertrainingruntimes.yaml",
}

// crdVersion is everything the emulated API server needs for one served version.
type crdVersion struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	// structural is the structural schema with defaults pruned, exactly what
	// the apiextensions handler uses for pruning, defaulting and CEL.
	structural *structuralschema.Structural
	// strategy is the real customresource create strategy (schema + CEL +
	// metadata validation).
	strategy rest.RESTCreateStrategy
	resource string // plural.group, for messages
}

type crdSet struct {
	dir    string
	byGVK  map[schema.GroupVersionKind]*crdVersion
	byKind map[schema.GroupKind][]string // served versions
}

func loadCRDs(dir string) (*crdSet, error) {
	var paths []string
	for _, name := range crdFileNames {
		paths = append(paths, filepath.Join(dir, name))
	}
	return loadCRDFiles(dir, paths)
}

// outputCRDFiles are the CRDs of the kinds the controller creates, as their modules
// ship them. volcano.sh/apis ships no CRD YAML, so Volcano PodGroups are not admitted.
var outputCRDFiles = []struct{ module, file string }{
	{"sigs.k8s.io/jobset", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"},
	{"sigs.k8s.io/scheduler-plugins", "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml"},
}

// loadOutputCRDs reads the CRDs of the created kinds from the module cache copies of
// exactly the module versions linked into this binary.
func loadOutputCRDs() (*crdSet, error) {
	var paths []string
	for _, f := range outputCRDFiles {
		dir, err := linkedModuleDir(f.module)
		if err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(dir, filepath.FromSlash(f.file)))
	}
	return loadCRDFiles("", paths)
}

// linkedModuleDir is the module cache directory of a module linked into this binary.
func linkedModuleDir(path string) (string, error) {
	version, err := linkedModuleVersion(path)
	if err != nil {
		return "", err
	}
	escPath, err := module.EscapePath(path)
	if err != nil {
		return "", err
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return "", err
	}
	for _, cache := range moduleCacheCandidates() {
		dir := filepath.Join(cache, filepath.FromSlash(escPath)+"@"+escVersion)
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			return dir, nil
		}
	}
	return "", inputf("cannot find %s@%s in the module cache; run `go mod download` in the oracle module", path, version)
}

func loadCRDFiles(dir string, paths []string) (*crdSet, error) {
	set := &crdSet{dir: dir, byGVK: map[schema.GroupVersionKind]*crdVersion{}, byKind: map[schema.GroupKind][]string{}}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, inputf("reading CRD: %v", err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			return nil, fmt.Errorf("parsing CRD %s: %w", path, err)
		}
		if err := set.add(&crd); err != nil {
			return nil, fmt.Errorf("CRD %s: %w", path, err)
		}
	}
	return set, nil
}

func (s *crdSet) add(crd *apiextensionsv1.CustomResourceDefinition) error {
	namespaced := crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return fmt.Errorf("version %s has no schema", v.Name)
		}
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
			return fmt.Errorf("converting schema of %s: %w", v.Name, err)
		}
		st, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return fmt.Errorf("structural schema of %s: %w", v.Name, err)
		}
		st = st.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(st); err != nil {
			return fmt.Errorf("pruning defaults of %s: %w", v.Name, err)
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
		if err != nil {
			return fmt.Errorf("schema validator of %s: %w", v.Name, err)
		}
		var statusSpec *apiextensions.CustomResourceSubresourceStatus
		var statusValidator apiservervalidation.SchemaValidator
		if v.Subresources != nil && v.Subresources.Status != nil {
			statusSpec = &apiextensions.CustomResourceSubresourceStatus{}
			if statusSchema, ok := internal.OpenAPIV3Schema.Properties["status"]; ok {
				statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema)
				if err != nil {
					return fmt.Errorf("status validator of %s: %w", v.Name, err)
				}
			}
		}
		var scaleSpec *apiextensions.CustomResourceSubresourceScale
		if v.Subresources != nil && v.Subresources.Scale != nil {
			scaleSpec = &apiextensions.CustomResourceSubresourceScale{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(v.Subresources.Scale, scaleSpec, nil); err != nil {
				return fmt.Errorf("scale subresource of %s: %w", v.Name, err)
			}
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		strategy := customresource.NewStrategy(
			crdserverscheme.NewUnstructuredObjectTyper(),
			namespaced, gvk, validator, statusValidator, st, statusSpec, scaleSpec, v.SelectableFields)
		s.byGVK[gvk] = &crdVersion{
			gvk:        gvk,
			namespaced: namespaced,
			structural: st,
			strategy:   strategy,
			resource:   crd.Spec.Names.Plural + "." + crd.Spec.Group,
		}
		s.byKind[gvk.GroupKind()] = append(s.byKind[gvk.GroupKind()], v.Name)
	}
	for gk := range s.byKind {
		sort.Strings(s.byKind[gk])
	}
	return nil
}
