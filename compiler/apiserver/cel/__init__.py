"""CEL as the API server runs it: the engine adapter and the Kubernetes CEL libraries."""
