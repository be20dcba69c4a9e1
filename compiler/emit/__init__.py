"""Emit: canonical YAML, the output tree, and the reports; rendering by chunks.

* ``yaml_text`` — canonical YAML text (stable key order, quoting for YAML 1.1 readers);
* ``output`` — one file per object (or one stream), the folder replaced atomically;
* ``tree`` — an output folder updated in place from the render cache;
* ``kustomization`` — a cluster's ``kustomization.yaml`` (GitOps hint);
* ``incremental`` — render by chunks, the render cache and ``-j``;
* ``check_parts`` — ``check -j``: chunks checked in workers, findings merged and cached;
* ``report_text``, ``report_json``, ``report_sarif``, ``report_junit`` — ``check`` reports.
"""
