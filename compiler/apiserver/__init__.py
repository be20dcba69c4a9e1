"""What the Kubernetes API server does to an object before it is stored.

YAML decoded as ``sigs.k8s.io/yaml`` reads it (with source positions; ``manifest``
is a loaded object and where each node came from), the
structural schema (pruning, defaults, types, formats, ObjectMeta), the CRDs of the
pinned upstream modules and their CEL rules (``x-kubernetes-validations``), and the
CEL engine with the Kubernetes CEL libraries (:mod:`compiler.apiserver.cel`).
"""
