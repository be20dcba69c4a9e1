"""User policies: ValidatingAdmissionPolicy objects evaluated offline, and ``.cue`` files."""
