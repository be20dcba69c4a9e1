"""The project file ``trainc.yaml``: inputs, target clusters, and per-cluster builds."""

from compiler.project.loader import PROJECT_FILE, Project, find_project, load_project

__all__ = ["PROJECT_FILE", "Project", "find_project", "load_project"]
