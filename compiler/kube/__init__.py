"""Kubernetes value semantics, as the Go libraries define them.

Label selectors, quantities (``k8s.io/apimachinery/pkg/api/resource``), pod resource requests
(``k8s.io/component-helpers``), Go's text forms of numbers and strings, how a Go
``field.Error`` and an ``encoding/json`` decoding error print, the typed JSON round trip
a Go controller gives every object it writes, and strategic merge patch driven by the
OpenAPI document. Nothing here knows about Trainer or files.
"""
