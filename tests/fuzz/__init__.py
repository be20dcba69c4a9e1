"""The robustness fuzzer (issue 16): hostile and broken input through the CLI's ``main()``.

    python -m tests.fuzz --count 1000 [--seed 0] [--jobs 2] [--out fuzz-out]
    make fuzz N=100000

Each case starts from real inputs — a golden case's files, the bundled example, or the
example project with its cluster overlays — and mutates them: a value replaced by a
hostile one (``null``, ``-0.``, ``2**63-1``, a string with a newline, 300 characters, a
name in capitals, ...), a key removed, a document duplicated, a line deleted, moved or
cut, control characters inserted, a file replaced by a FIFO or a symlink to a device.
The case then runs in-process through :func:`compiler.cli.main` (``render -o -``,
``render -o DIR``, ``check --format json`` or a project ``render``), with a time limit
(``SIGALRM``) and an address-space limit of 1 GiB above the worker's start
(``RLIMIT_AS``), and is classified:

* traceback: ``main()`` raised (anything but ``SystemExit``), or printed a traceback;
* exit: an exit code other than 0, 1, 2;
* hang: the case ran past its time limit;
* memory: a ``MemoryError`` (the 1 GiB limit), or peak RSS growth over 1 GiB;
* without location: an error that names no input file (a ``render`` error line that
  does not start with a file of the case; a ``check`` error finding without a location);
* false success: (surface ``apply``) exit 0, or an object reported applied, after an
  answer that was not a valid success.

Failing cases are copied to ``--out`` to reproduce. The last line is exactly::

    fuzz: N cases, T tracebacks, H hangs, L without location

and the exit code is 1 if any count (or an exit outside 0/1/2, or memory) is not zero.
"""
