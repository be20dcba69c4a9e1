"""Target selection: kinds, anchored name regexes, Kubernetes selector syntax."""

from __future__ import annotations

import pytest

from compiler.overlay.targets import SelectorError, Target, parse_selector

JOB = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "llm-7b", "namespace": "team-a", "labels": {"tier": "gpu", "env": "prod"}},
}


@pytest.mark.parametrize(
    ("target", "matches"),
    [
        (Target(), True),
        (Target(group="jobset.x-k8s.io", version="v1alpha2", kind="JobSet"), True),
        (Target(group=""), False),
        (Target(name="llm-.*"), True),
        (Target(name="llm"), False),  # anchored: a prefix is not a match
        (Target(namespace="team-(a|b)"), True),
        (Target(label_selector=parse_selector("tier=gpu,env!=dev")), True),
        (Target(label_selector=parse_selector("tier notin (gpu)")), False),
        (Target(label_selector=parse_selector("!missing,tier")), True),
        (Target(label_selector=parse_selector("missing")), False),
        (Target(annotation_selector=parse_selector("a!=b", annotations=True)), True),
    ],
)
def test_matches(target: Target, matches: bool) -> None:
    assert target.matches(JOB) is matches


@pytest.mark.parametrize("text", ["a in b", "a=", "=b", "a in ()", "a,", "a b", "-bad=x", "a=b c"])
def test_bad_selectors(text: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(text)
