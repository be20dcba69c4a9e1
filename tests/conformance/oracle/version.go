package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

type versionInfo struct {
	Oracle       string            `json:"oracle"`
	Go           string            `json:"go"`
	Trainer      string            `json:"trainer"`
	CRDDir       string            `json:"crd_dir"`
	CRDDirError  string            `json:"crd_dir_error,omitempty"`
	FeatureGates map[string]bool   `json:"feature_gates"`
	Modules      map[string]string `json:"modules"`
}

// cmdVersion prints the module versions linked into the binary, for stamping
// golden files.
func cmdVersion(args []string, stdout io.Writer) (int, error) {
	fs := newFlagSet("version")
	crdDir := fs.String("crd-dir", "", "directory holding the Trainer CRD YAMLs")
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return 0, err
	}
	if len(rest) > 0 {
		return 0, usagef("version takes no arguments")
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return 0, fmt.Errorf("no build information in the binary")
	}
	v := versionInfo{
		Oracle:       info.Main.Path,
		Go:           info.GoVersion,
		FeatureGates: trainerFeatureGates(),
		Modules:      map[string]string{},
	}
	for _, dep := range info.Deps {
		version := dep.Version
		if dep.Replace != nil {
			version = fmt.Sprintf("%s => %s %s", dep.Version, dep.Replace.Path, dep.Replace.Version)
		}
		v.Modules[dep.Path] = version
		if dep.Path == trainerModulePath {
			v.Trainer = version
		}
	}
	if dir, err := locateCRDDir(*crdDir); err == nil {
		v.CRDDir = dir
	} else {
		v.CRDDirError = err.Error()
	}
	return exitOK, writeJSON(stdout, v)
}
