"""User policies: ValidatingAdmissionPolicy objects evaluated offline (``vap``), ``.cue``
files checked by the pinned ``cue`` CLI (``cue``), and the objects they see (``objects``).
"""
