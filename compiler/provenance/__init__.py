"""Field provenance: which input file, line and layer set each rendered field (``trainc explain``)."""
