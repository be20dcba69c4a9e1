"""Stage 1, load: files -> typed, defaulted Kubernetes objects that remember their source positions."""
