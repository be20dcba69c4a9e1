"""The project file ``trainc.yaml``: inputs and target clusters, with their overlays,
policies and delivery hints (``model``, typed); ``loader`` finds and reads it and expands
its paths and globs. ``compiler.plan.build_plan`` makes one build plan per cluster."""

from compiler.project.loader import PROJECT_FILE, Project, find_project, load_project

__all__ = ["PROJECT_FILE", "Project", "find_project", "load_project"]
