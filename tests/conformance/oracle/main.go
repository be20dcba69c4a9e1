// Command oracle runs the real upstream Kubeflow Trainer code (the version
// pinned in go.mod) on YAML inputs, so that trainc's golden files record what
// the upstream API server + admission webhooks + controller would do.
//
// See README.md for the CLI contract; stdout is machine-read, stderr is for
// humans.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes (documented in README.md).
const (
	exitOK               = 0
	exitInternal         = 1
	exitUsage            = 2
	exitRejected         = 3
	exitNondeterministic = 4
)

// defaultOwnerUID is the TrainJob UID used when --owner-uid is not given. It
// ends up in every ownerReference of the rendered objects.
const defaultOwnerUID = "00000000-0000-0000-0000-000000000000"

// usageError marks problems with the command line (showUsage) or with
// unreadable input; both exit with code 2.
type usageError struct {
	msg       string
	showUsage bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), showUsage: true}
}

func inputf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

const usageText = `usage:
  oracle render   [flags] FILE...   admit the inputs like the API server, then print
                                    the objects the Trainer controller creates (YAML)
  oracle validate [flags] FILE...   admission only (CRD schema, CEL, webhooks); prints JSON
  oracle version                    print linked module versions as JSON
  oracle serve    [flags]           render requests read as JSON lines on stdin (see serve.go)

common flags:
  --crd-dir DIR           directory holding the Trainer CRD YAMLs (default: the
                          manifests/base/crds of the linked trainer module in GOMODCACHE)
  --field-validation M    Strict (default), Warn or Ignore, like kubectl --validate
  --skip-webhook          do not run the Trainer admission webhooks
  --feature-gates SPEC    e.g. TrainJobStatus=true (default: upstream defaults)
  -v N                    log verbosity on stderr (default 0: silent)

render flags:
  --owner-uid UID         UID given to every TrainJob (default ` + defaultOwnerUID + `)
  --order ORDER           canonical (default) or returned (upstream's own, random order)
  --mask-secret-data      replace every Secret data value with "<masked>"
  --check-determinism N   render N times with fresh controllers; exit 4 if the
                          outputs differ (Secret data is ignored in the comparison)
  --timing                one JSON line on stderr: seconds in the render (fresh cluster,
                          NewObjects, output admission) and in writing the stream

exit codes: 0 ok, 1 internal error, 2 usage or unreadable input,
            3 rejected (JSON error document on stdout), 4 nondeterministic output
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	var err error
	code := exitOK
	switch cmd {
	case "render":
		code, err = cmdRender(rest, stdout, stderr)
	case "validate":
		code, err = cmdValidate(rest, stdout, stderr)
	case "version":
		code, err = cmdVersion(rest, stdout)
	case "serve":
		code, err = cmdServe(rest, os.Stdin, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	default:
		err = usagef("unknown command %q", cmd)
	}
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			if ue.showUsage {
				fmt.Fprintf(stderr, "oracle: %v\n\n%s", err, usageText)
			} else {
				fmt.Fprintf(stderr, "oracle: %v\n", err)
			}
			return exitUsage
		}
		fmt.Fprintf(stderr, "oracle: %v\n", err)
		return exitInternal
	}
	return code
}

// commonOptions are shared by render and validate.
type commonOptions struct {
	crdDir          string
	fieldValidation string
	skipWebhook     bool
	featureGates    string
	verbosity       int
}

func (o *commonOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.crdDir, "crd-dir", "", "directory holding the Trainer CRD YAMLs")
	fs.StringVar(&o.fieldValidation, "field-validation", "Strict", "Strict, Warn or Ignore")
	fs.BoolVar(&o.skipWebhook, "skip-webhook", false, "do not run the Trainer admission webhooks")
	fs.StringVar(&o.featureGates, "feature-gates", "", "feature gates, e.g. TrainJobStatus=true")
	fs.IntVar(&o.verbosity, "v", 0, "log verbosity on stderr")
}

func (o *commonOptions) check() error {
	switch o.fieldValidation {
	case "Strict", "Warn", "Ignore":
	default:
		return usagef("--field-validation must be Strict, Warn or Ignore, not %q", o.fieldValidation)
	}
	return nil
}

// parseInterleaved parses flags that may appear before, between or after the
// positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// prepare loads inputs, CRDs and process-wide settings shared by render and validate.
func prepare(ctx context.Context, opts *commonOptions, files []string, stderr io.Writer) (*session, error) {
	if len(files) == 0 {
		return nil, usagef("no input files")
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	setupLogging(opts.verbosity, stderr)
	if opts.featureGates != "" {
		if err := setFeatureGates(opts.featureGates); err != nil {
			return nil, usagef("--feature-gates: %v", err)
		}
	}
	docs, err := readInputs(files)
	if err != nil {
		return nil, err
	}
	dir, err := locateCRDDir(opts.crdDir)
	if err != nil {
		return nil, err
	}
	crds, err := loadCRDs(dir)
	if err != nil {
		return nil, err
	}
	return newSession(ctx, opts, crds, docs)
}

func cmdValidate(args []string, stdout, stderr io.Writer) (int, error) {
	var opts commonOptions
	fs := newFlagSet("validate")
	opts.register(fs)
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	s, err := prepare(ctx, &opts, files, stderr)
	if err != nil {
		return 0, err
	}
	s.admitAll(ctx)
	if err := writeJSON(stdout, s.report); err != nil {
		return 0, err
	}
	if s.report.Rejected {
		return exitRejected, nil
	}
	return exitOK, nil
}

func cmdRender(args []string, stdout, stderr io.Writer) (int, error) {
	var opts commonOptions
	var ropts renderOptions
	fs := newFlagSet("render")
	opts.register(fs)
	fs.StringVar(&ropts.ownerUID, "owner-uid", defaultOwnerUID, "UID given to every TrainJob")
	fs.StringVar(&ropts.order, "order", "canonical", "canonical or returned")
	fs.BoolVar(&ropts.maskSecretData, "mask-secret-data", false, "replace Secret data values")
	fs.IntVar(&ropts.runs, "check-determinism", 1, "number of independent renders to compare")
	fs.BoolVar(&ropts.timing, "timing", false, "print the seconds spent rendering as JSON on stderr")
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return 0, err
	}
	if ropts.order != "canonical" && ropts.order != "returned" {
		return 0, usagef("--order must be canonical or returned, not %q", ropts.order)
	}
	if ropts.runs < 1 {
		return 0, usagef("--check-determinism must be at least 1")
	}
	if strings.TrimSpace(ropts.ownerUID) == "" {
		return 0, usagef("--owner-uid must not be empty")
	}
	ctx := context.Background()
	s, err := prepare(ctx, &opts, files, stderr)
	if err != nil {
		return 0, err
	}
	s.ownerUID = ropts.ownerUID
	s.admitAll(ctx)
	if s.report.Rejected {
		return exitRejected, writeJSON(stdout, s.report)
	}
	return s.render(ctx, &ropts, stdout, stderr)
}
