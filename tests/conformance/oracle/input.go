package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	jsonserializer "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// document is one YAML document of an input file.
type document struct {
	file  string
	index int // 0-based position among the file's non-empty documents
	raw   []byte
}

// readInputs splits every file into its non-empty YAML documents.
func readInputs(files []string) ([]document, error) {
	var docs []document
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, inputf("cannot read input: %v", err)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
		n := 0
		for {
			chunk, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, inputf("%s: cannot split YAML documents: %v", f, err)
			}
			asJSON, err := yaml.YAMLToJSON(chunk)
			if err != nil {
				return nil, inputf("%s: document %d: invalid YAML: %v", f, n, err)
			}
			if t := bytes.TrimSpace(asJSON); len(t) == 0 || bytes.Equal(t, []byte("null")) {
				continue // empty or comment-only document
			}
			docs = append(docs, document{file: f, index: n, raw: chunk})
			n++
		}
	}
	return docs, nil
}

// decodeDocument decodes a YAML document into an Unstructured with the same
// serializer the API server uses for request bodies. In strict mode, duplicate
// fields come back as strict errors (non-fatal, like the server which then
// reports or tolerates them according to fieldValidation).
func decodeDocument(doc document, strict bool) (*unstructured.Unstructured, []error, error) {
	scheme := runtime.NewScheme()
	serializer := jsonserializer.NewSerializerWithOptions(jsonserializer.DefaultMetaFactory, scheme, scheme,
		jsonserializer.SerializerOptions{Yaml: true, Strict: strict})
	u := &unstructured.Unstructured{}
	_, _, err := serializer.Decode(doc.raw, nil, u)
	if err != nil {
		if strictErr, ok := runtime.AsStrictDecodingError(err); ok {
			return u, strictErr.Errors(), nil
		}
		return nil, nil, inputf("%s: document %d: %v", doc.file, doc.index, err)
	}
	if u.GetAPIVersion() == "" {
		return nil, nil, inputf("%s: document %d: apiVersion is not set", doc.file, doc.index)
	}
	return u, nil, nil
}

func (d document) String() string {
	return fmt.Sprintf("%s#%d", d.file, d.index)
}
