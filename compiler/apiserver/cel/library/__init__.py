"""The Kubernetes CEL libraries, one module for each file of k8s.io/apiserver ``pkg/cel/library``.

:mod:`.quantity`, :mod:`.semver`, :mod:`.urls`, :mod:`.regex`, :mod:`.lists`, :mod:`.ip`,
:mod:`.cidr` and :mod:`.format` each declare their functions for the type check and
implement them in Python for the run (:mod:`.declarations`); :mod:`.strings` declares
the standard ``string()`` and the strings extension the libraries extend, and
:mod:`.compare` runs the comparisons quantity and semver share. :mod:`.netip` and
:mod:`.neturl` port the Go parsers they need; :mod:`.values` holds their error and
tagged values; :mod:`.registry` gathers them into the environments that
:mod:`compiler.apiserver.cel.k8s` builds.
"""
