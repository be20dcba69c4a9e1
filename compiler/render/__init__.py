"""Stage 3, render: the Trainer runtime framework re-expressed as pure Python functions."""
