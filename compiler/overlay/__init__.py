"""Schema-driven merges: strategic merge patch (runtimePatches, overlays) and RFC 6902."""
