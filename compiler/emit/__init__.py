"""Emit: the writers of what the driver made; nothing here runs a chain.

* ``yaml_text`` — canonical YAML text (stable key order, quoting for YAML 1.1 readers);
* ``output`` — one file per object (or one stream), the folder replaced atomically;
* ``tree`` — an output folder updated in place from the render cache;
* ``blobs`` — the blob store the driver's chunks put objects in, atomic cache entries;
* ``kustomization`` — a cluster's ``kustomization.yaml`` (GitOps hint: a file of the
  output tree, so written here; the annotations are a stage, ``compiler.plan.gitops``);
* ``report_text``, ``report_json``, ``report_sarif``, ``report_junit`` — ``check`` reports.

Writers take records of :mod:`compiler.model`; ``compiler/layers_test.py`` fails on any
import of :mod:`compiler.plan` here.
"""
