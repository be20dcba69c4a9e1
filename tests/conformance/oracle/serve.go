package main

// serve: a long-running `render` for differential fuzzing. Building the CRD
// schemas costs more than rendering, so the server does that once and then
// answers one request per input line; every request goes through exactly the
// steps of `oracle render` (same input splitting, same admission, a fresh
// session and a fresh emulated cluster per TrainJob, the process-wide feature
// gates set once at start).
//
// Request (one JSON object per line on stdin):
//
//	{"id": <any JSON>, "ownerUID": "<uid>", "documents": ["<YAML text of file 1>", ...],
//	 "names": ["runtime.yaml", ...]}
//
// "ownerUID" defaults to the render default, "names" (optional) are the file
// names reported in rejections (default input-<i>.yaml).
//
// Answer (one JSON object per line on stdout, in request order):
//
//	{"id": ..., "exit": 0, "objects": [<object>, ...]}        rendered (canonical order unless --order returned)
//	{"id": ..., "exit": 3, "rejection": {<render's JSON document>}}
//	{"id": ..., "exit": 4, "objects": [...], "stderr": "..."}  --check-determinism found a difference
//	{"id": ..., "exit": 2, "error": "..."}                    unreadable request or input
//	{"id": ..., "exit": 1, "error": "...", "panic": true}      upstream code panicked (recovered)
//
// "stderr" carries whatever the request wrote to stderr (diagnostics with -v).
// The server ends at the end of stdin.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

type serveRequest struct {
	ID        json.RawMessage `json:"id"`
	OwnerUID  string          `json:"ownerUID"`
	Documents []string        `json:"documents"`
	Names     []string        `json:"names"`
}

type serveAnswer struct {
	ID        json.RawMessage    `json:"id"`
	Exit      int                `json:"exit"`
	Objects   *[]json.RawMessage `json:"objects,omitempty"`
	Rejection json.RawMessage    `json:"rejection,omitempty"`
	Error     string             `json:"error,omitempty"`
	Panic     bool               `json:"panic,omitempty"`
	Stderr    string             `json:"stderr,omitempty"`
}

type server struct {
	opts  commonOptions
	ropts renderOptions
	crds  *crdSet
}

func cmdServe(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	var srv server
	fs := newFlagSet("serve")
	srv.opts.register(fs)
	fs.StringVar(&srv.ropts.order, "order", "canonical", "canonical or returned")
	fs.BoolVar(&srv.ropts.maskSecretData, "mask-secret-data", false, "replace Secret data values")
	fs.IntVar(&srv.ropts.runs, "check-determinism", 1, "number of independent renders to compare")
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return 0, err
	}
	if len(rest) > 0 {
		return 0, usagef("serve reads its inputs from stdin and takes no files")
	}
	if srv.ropts.order != "canonical" && srv.ropts.order != "returned" {
		return 0, usagef("--order must be canonical or returned, not %q", srv.ropts.order)
	}
	if srv.ropts.runs < 1 {
		return 0, usagef("--check-determinism must be at least 1")
	}
	// The once-per-process part of prepare().
	if err := srv.opts.check(); err != nil {
		return 0, err
	}
	setupLogging(srv.opts.verbosity, stderr)
	if srv.opts.featureGates != "" {
		if err := setFeatureGates(srv.opts.featureGates); err != nil {
			return 0, usagef("--feature-gates: %v", err)
		}
	}
	dir, err := locateCRDDir(srv.opts.crdDir)
	if err != nil {
		return 0, err
	}
	if srv.crds, err = loadCRDs(dir); err != nil {
		return 0, err
	}

	in := bufio.NewReader(stdin)
	out := bufio.NewWriter(stdout)
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			answer := srv.answer(line)
			raw, err := json.Marshal(answer)
			if err != nil {
				raw, _ = json.Marshal(serveAnswer{ID: answer.ID, Exit: exitInternal, Error: "encoding the answer: " + err.Error()})
			}
			out.Write(raw)
			out.WriteByte('\n')
			if err := out.Flush(); err != nil {
				return 0, err
			}
		}
		if errors.Is(readErr, io.EOF) {
			return exitOK, nil
		}
		if readErr != nil {
			return 0, readErr
		}
	}
}

// answer handles one request line; a panic in upstream code becomes an error
// answer for this request only.
func (srv *server) answer(line []byte) (a serveAnswer) {
	var req serveRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return serveAnswer{ID: json.RawMessage("null"), Exit: exitUsage, Error: "invalid request: " + err.Error()}
	}
	if len(req.ID) == 0 {
		req.ID = json.RawMessage("null")
	}
	defer func() {
		if r := recover(); r != nil {
			a = serveAnswer{ID: req.ID, Exit: exitInternal, Panic: true,
				Error: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	var diag bytes.Buffer
	a = srv.render(&req, &diag)
	a.ID = req.ID
	a.Stderr = diag.String()
	return a
}

// render does what cmdRender does for files holding req.Documents.
func (srv *server) render(req *serveRequest, stderr io.Writer) serveAnswer {
	if len(req.Documents) == 0 {
		return serveAnswer{Exit: exitUsage, Error: "no input documents"}
	}
	if req.Names != nil && len(req.Names) != len(req.Documents) {
		return serveAnswer{Exit: exitUsage, Error: "names and documents differ in length"}
	}
	ownerUID := req.OwnerUID
	if strings.TrimSpace(ownerUID) == "" {
		ownerUID = defaultOwnerUID
	}
	// The inputs go through readInputs like render's files do; file names in
	// the answer are the request's names.
	tmp, err := os.MkdirTemp("", "oracle-serve-")
	if err != nil {
		return serveAnswer{Exit: exitInternal, Error: err.Error()}
	}
	defer os.RemoveAll(tmp)
	var paths []string
	display := map[string]string{}
	for i, text := range req.Documents {
		name := fmt.Sprintf("input-%d.yaml", i)
		if req.Names != nil {
			name = req.Names[i]
		}
		path := filepath.Join(tmp, fmt.Sprintf("%d-%s", i, filepath.Base(name)))
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			return serveAnswer{Exit: exitInternal, Error: err.Error()}
		}
		paths = append(paths, path)
		display[path] = name
	}
	docs, err := readInputs(paths)
	if err != nil {
		return failure(err, display)
	}
	for i := range docs {
		docs[i].file = display[docs[i].file]
	}

	ctx := context.Background()
	s, err := newSession(ctx, &srv.opts, srv.crds, docs)
	if err != nil {
		return failure(err, display)
	}
	s.ownerUID = ownerUID
	s.admitAll(ctx)
	if s.report.Rejected {
		return rejection(s.report)
	}
	ropts := srv.ropts
	ropts.ownerUID = ownerUID
	var stdout bytes.Buffer
	code, err := s.render(ctx, &ropts, &stdout, stderr)
	if err != nil {
		return failure(err, display)
	}
	if code == exitRejected {
		return rejection(s.report)
	}
	objects, err := yamlStreamToJSON(stdout.Bytes())
	if err != nil {
		return serveAnswer{Exit: exitInternal, Error: err.Error()}
	}
	return serveAnswer{Exit: code, Objects: &objects}
}

func rejection(r *report) serveAnswer {
	raw, err := json.Marshal(r)
	if err != nil {
		return serveAnswer{Exit: exitInternal, Error: err.Error()}
	}
	return serveAnswer{Exit: exitRejected, Rejection: raw}
}

// failure maps an error the way run() maps it to an exit code, with temporary
// paths replaced by the request's names.
func failure(err error, display map[string]string) serveAnswer {
	msg := err.Error()
	for path, name := range display {
		msg = strings.ReplaceAll(msg, path, name)
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return serveAnswer{Exit: exitUsage, Error: msg}
	}
	return serveAnswer{Exit: exitInternal, Error: msg}
}

// yamlStreamToJSON turns render's "---\n<doc>" stream back into the JSON
// documents it was converted from.
func yamlStreamToJSON(stream []byte) ([]json.RawMessage, error) {
	objects := []json.RawMessage{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	for {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return objects, nil
		}
		if err != nil {
			return nil, err
		}
		raw, err := yaml.YAMLToJSON(chunk)
		if err != nil {
			return nil, err
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		objects = append(objects, raw)
	}
}
