"""The build plan: what a command works on, and the stage chain every verb runs."""
