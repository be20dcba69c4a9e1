"""Load: files -> admitted Kubernetes objects that remember their source positions.

``discover`` finds the input files (folders, globs, stdin; regular files only);
``loader`` decodes each document and runs the API server's create path on it.
"""
