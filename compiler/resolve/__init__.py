"""Stage 2, resolve: find the runtime each TrainJob references."""
