// cmpwrapper runs a Config Management Plugin's generate command through Argo CD's own
// cmpserver/plugin package, as the sidecar's gRPC service does: the repository is
// packed into a tar.gz stream (util/cmp), unpacked into a fresh work directory, and the
// plugin.yaml's generate command runs in <workdir>/<app path> with the request's
// environment; the manifests it returns are printed as a JSON list on stdout.
//
//	cmpwrapper PLUGIN_CONFIG_DIR REPO_ROOT APP_REL_PATH TIMEOUT_SECONDS [KEY=VALUE...]
//
// Exit 0 with the manifests, 1 with Argo CD's error text on stderr, 2 on usage errors.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	pluginclient "github.com/argoproj/argo-cd/v3/cmpserver/apiclient"
	"github.com/argoproj/argo-cd/v3/cmpserver/plugin"
	"github.com/argoproj/argo-cd/v3/util/cmp"
	"github.com/argoproj/argo-cd/v3/util/tgzstream"
	"google.golang.org/grpc"
)

type stream struct {
	grpc.ServerStream
	ctx      context.Context
	requests []*pluginclient.AppStreamRequest
	response *pluginclient.ManifestResponse
}

func (s *stream) Context() context.Context { return s.ctx }

func (s *stream) Recv() (*pluginclient.AppStreamRequest, error) {
	if len(s.requests) == 0 {
		return nil, io.EOF
	}
	next := s.requests[0]
	s.requests = s.requests[1:]
	return next, nil
}

func (s *stream) SendAndClose(response *pluginclient.ManifestResponse) error {
	s.response = response
	return nil
}

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: cmpwrapper PLUGIN_CONFIG_DIR REPO_ROOT APP_REL_PATH TIMEOUT_SECONDS [KEY=VALUE...]")
		os.Exit(2)
	}
	config, err := plugin.ReadPluginConfig(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	seconds, err := strconv.Atoi(os.Args[4])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	repo, _ := filepath.Abs(os.Args[2])
	appPath := filepath.Join(repo, os.Args[3])
	tgz, metadata, err := cmp.GetCompressedRepoAndMetadata(repo, appPath, os.Args[5:], nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer tgzstream.CloseAndDelete(tgz)
	var buffer bytes.Buffer
	if _, err := io.Copy(&buffer, tgz); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second)
	defer cancel()
	s := &stream{ctx: ctx, requests: []*pluginclient.AppStreamRequest{metadata, cmp.AppFileRequest(buffer.Bytes())}}
	service := plugin.NewService(plugin.CMPServerInitConstants{PluginConfig: *config})
	if err := service.GenerateManifest(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, _ := json.Marshal(s.response.Manifests)
	os.Stdout.Write(out)
}
