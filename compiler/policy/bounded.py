"""Run a helper program (the ``cue`` CLI) within a deadline and a memory limit.

A policy is code from the repository being checked, and Argo CD runs trainc on
repositories it does not trust: a policy must not be able to hold a core or the
machine's memory past what the check allows. :func:`run_bounded` starts the program

* in a session (so a process group) of its own, killed whole (``SIGKILL`` to the group)
  when the deadline passes, and also when trainc is stopped while it waits: Ctrl-C, or
  ``SIGTERM``, which the CLI turns into an exception (:mod:`compiler.cli`);
* with ``RLIMIT_DATA`` set to the memory limit. Since Linux 4.7 it counts every private
  writable mapping, so for a Go program it is the heap and stacks it has committed, not
  the address space it only reserves: measured with cue v0.17.1, a policy that doubles a
  string stops at a peak RSS at most 10% above the limit (256 MiB: 281 MiB, 2 GiB:
  2,075 MiB). ``RLIMIT_AS`` cannot be used: the Go runtime reserves address space far
  beyond what it uses, and cue fails to start under 800 MiB of it (with 20 MiB resident);
  ``GOMEMLIMIT`` is only a target the collector aims at, not a bound; polling the
  group's RSS from ``/proc`` would let a fast allocation overshoot between two polls;
* set to be killed by the kernel when the process that started it dies
  (``PR_SET_PDEATHSIG``), for the ends trainc cannot handle: Argo CD's plugin server
  kills a command that runs out of its time with ``SIGKILL``.

The Go runtime reports an exhausted limit as ``fatal error: ... out of memory``;
:func:`run_bounded` raises :class:`LimitExceeded` for that and for the deadline.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

__all__ = ["Completed", "LimitExceeded", "run_bounded"]

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_STOPPING = {signal.SIGINT, signal.SIGTERM}
# How long to wait for a group just sent SIGKILL to be reaped (it cannot refuse; this
# only bounds a process stuck in the kernel).
_REAP_SECONDS = 10.0
# The Go runtime's words when a memory limit stops it: "fatal error: out of memory",
# "... out of memory allocating heap arena metadata", "runtime: cannot allocate memory",
# and a thread it cannot create (its stack is an allocation too).
_GO_OUT_OF_MEMORY = re.compile(
    r"^fatal error: (.*out of memory.*|.*cannot allocate memory.*|newosproc)$", re.MULTILINE
)


@dataclass(frozen=True)
class Completed:
    """A run that ended by itself within its limits."""

    returncode: int
    stdout: str
    stderr: str


class LimitExceeded(Exception):
    """The program ran past its deadline (``"time"``) or its memory limit (``"memory"``),
    and its process group was killed."""

    def __init__(self, limit: Literal["time", "memory"]) -> None:
        super().__init__(limit)
        self.limit = limit


@cache
def _prctl() -> Callable[..., Any] | None:
    """libc's ``prctl`` (Linux), loaded here so the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # here: every trainc start imports this module (compiler.cli)

    try:
        function: Callable[..., Any] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return function


def _data_limit(memory: int) -> tuple[int, int]:
    """``RLIMIT_DATA`` of at most ``memory`` bytes (never above a hard limit already set)."""
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        memory = min(memory, hard)
    return memory, memory


def _child_setup(memory: int, mask: Iterable[int]) -> Callable[[], None]:
    """What the child runs between fork and exec (only what is safe there: system calls);
    ``mask``: the signal mask the program is to start with."""
    parent = os.getpid()
    limits = _data_limit(memory)
    prctl = _prctl()

    def setup() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, limits)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the parent died before the line above
                os._exit(1)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    return setup


def _stop(process: subprocess.Popen[str]) -> None:
    """Kill the process group of ``process`` and reap it (the group's id is its pid, and
    stays taken until it is reaped, so the signal cannot reach a stranger)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):
        process.communicate(timeout=_REAP_SECONDS)


def out_of_memory(returncode: int, stderr: str) -> bool:
    """Whether a Go program ended because an allocation failed.

    >>> out_of_memory(2, "fatal error: out of memory allocating heap arena metadata\\n")
    True
    >>> out_of_memory(1, "x: conflicting values 1 and 2:\\n    ./a.cue:1:4\\n")
    False
    """
    return returncode != 0 and _GO_OUT_OF_MEMORY.search(stderr) is not None


def run_bounded(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    memory: int,
) -> Completed:
    """Run ``argv`` to its end within ``timeout`` seconds and ``memory`` bytes.

    Raises :class:`LimitExceeded` when it runs out of either (its group killed), and
    :class:`OSError` when it cannot be started. Whatever interrupts the wait (Ctrl-C,
    ``SIGTERM`` turned into an exception) kills the group before it goes on.
    """
    # Ctrl-C and SIGTERM are held while the program starts: raised inside Popen, they
    # would leave it running with nobody to kill it. They are raised below, in the try.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        process = _start(argv, cwd, env, _child_setup(memory, mask))
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        stdout, stderr = process.communicate(timeout=max(timeout, 0.0))
    except subprocess.TimeoutExpired:
        _stop(process)
        raise LimitExceeded("time") from None
    except BaseException:
        _stop(process)
        raise
    # Anything the program started and left behind goes with it.
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if out_of_memory(process.returncode, stderr):
        raise LimitExceeded("memory")
    return Completed(process.returncode, stdout, stderr)


def _start(
    argv: list[str], cwd: Path, env: Mapping[str, str], setup: Callable[[], None]
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
        preexec_fn=setup,  # system calls only: safe between fork and exec
    )
