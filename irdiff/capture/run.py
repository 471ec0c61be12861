"""The parent side of ``irdiff capture``: prepare the directory, run the program with the hooks, finalize.

See :mod:`irdiff.capture` for how the hooks reach the program's processes.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from irdiff.interrupt import Interrupted

__all__ = [
    "CAPTURE_SUITE",
    "CaptureError",
    "CaptureResult",
    "is_capture",
    "misplaced_options",
    "program_command",
    "run_capture",
]

CAPTURE_SUITE = "capture"  # manifest "suite" of a capture bundle


class CaptureError(ValueError):
    """Bad capture request (output directory, command, target, filter); one-line message (a ``ValueError``, so the
    CLI prints it as ``error: …`` with exit status 2)."""


@dataclass
class CaptureResult:
    """Outcome of :func:`run_capture`.

    :ivar exit_code: the program's exit status (``128 + N`` when killed by signal ``N``).
    :ivar program_seconds: wall time of the program itself (s).
    :ivar finalize_seconds: wall time of the after-run step (SASS, ptxas report, compiler log), s.
    :ivar kernels: variant names captured, in capture order.
    :ivar skipped: kernel names left out by ``--filter``, one per compiled kernel.
    :ivar processes: Python processes that installed the hooks.
    :ivar warnings: one line each (hook errors, finalize errors, no process hooked).
    """

    directory: Path
    exit_code: int
    program_seconds: float
    finalize_seconds: float = 0.0
    kernels: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    processes: int = 0
    warnings: list[str] = field(default_factory=list)


def program_command(args: list[str], python: str | None = None) -> list[str]:
    """The command to run: ``script.py ARGS`` and ``-m mod ARGS`` get the current Python in front; any other
    command (``python train.py``, ``torchrun …``, ``./run.sh``) is run as given.

    :raises CaptureError: empty command.
    """
    if not args:
        raise CaptureError("no program given: irdiff capture -o DIR -- python script.py [ARGS...]")
    if args[0] == "-m" or args[0].endswith(".py"):
        return [python or sys.executable, *args]
    return list(args)


# ``irdiff capture``'s own options (``irdiff/cli.py: capture_cmd``): written after ``--`` they reach the program.
CAPTURE_OPTIONS = (
    "-o",
    "--output",
    "--filter",
    "--target",
    "--launches",
    "--explain",
    "--no-explain",
    "--sass",
    "--force",
    "-j",
    "--jobs",
)


def misplaced_options(args: list[str]) -> tuple[list[str], str | None]:
    """``irdiff capture``'s own options among the program's arguments (after ``--``).

    :returns: (the options found, a one-line error when they stand before the program itself — ``-- --target sm90
        python x.py`` — where they cannot be the program's; None when they follow the program's name, where they
        may be the program's own, and the caller warns only if nothing was captured).
    """
    found = [a.split("=", 1)[0] for a in args if a.split("=", 1)[0] in CAPTURE_OPTIONS]
    if not found:
        return [], None
    lead = []
    for a in args:
        if not a.startswith("-"):
            break
        lead.append(a.split("=", 1)[0])
    if any(a in CAPTURE_OPTIONS for a in lead):
        opts = " ".join(a for a in lead if a in CAPTURE_OPTIONS)
        return found, (
            f"{opts}: irdiff capture's own option written after `--`, where the program's command starts; "
            "put it before `--`: irdiff capture --target sm90 -o DIR -- python script.py"
        )
    return found, None


def is_capture(directory: str | os.PathLike[str]) -> bool:
    """True when ``directory`` holds a bundle written by ``irdiff capture`` (manifest ``suite`` = capture)."""
    mf = Path(directory) / "manifest.json"
    try:
        return json.loads(mf.read_text()).get("suite") == CAPTURE_SUITE
    except (OSError, ValueError, AttributeError):
        return False


def _prepare_directory(out: Path, force: bool) -> None:
    if out.exists() and not out.is_dir():
        raise CaptureError(f"-o {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not force:
            raise CaptureError(f"-o {out}: directory is not empty (pass --force to replace an earlier capture)")
        if not is_capture(out):
            raise CaptureError(f"-o {out}: not an irdiff capture; refusing to delete it even with --force")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def run_capture(
    command: list[str],
    out: str | os.PathLike[str],
    *,
    filter: str | None = None,
    target: str | None = None,
    launches: int = 8,
    force: bool = False,
    explain: bool = False,
    sass: bool = False,
    jobs: int = 0,
    env: dict[str, str] | None = None,
) -> CaptureResult:
    """Run ``command`` with the capture hooks in every Python process it starts; write a capture bundle to ``out``.

    :param command: the program's command line, as given after ``--`` (see :func:`program_command`).
    :param filter: regular expression on kernel names (``re.search``); others are not recorded.
    :param target: ``sm80`` … ``sm120``: compile for this target with irdiff's stand-in driver (no GPU; the program
        can warm kernels up, not launch them). None: leave Triton's driver alone.
    :param launches: launches sampled per kernel (grid, argument shapes/dtypes/strides); 0 installs no launch hook.
    :param explain: recompile every captured TTIR afterwards to record the compiler's reasoning (LLVM debug log).
        Off by default: ``irdiff diff`` records it on demand, only for the kernels of pairs that differ.
    :param sass: disassemble every kernel's SASS afterwards (about 0.6 s of CPU per kernel in cuobjdump). Off by
        default: ``irdiff diff`` disassembles on demand, only the kernels of pairs whose PTX differs.
    :param env: the program's environment (default ``os.environ``); irdiff adds only its ``IRDIFF_CAPTURE_*``
        variables and its bootstrap directory in front of ``PYTHONPATH``.
    :raises CaptureError: bad output directory, empty command, bad ``filter`` or ``target``.
    :returns: the program's exit status and what was captured; the program's own output is not touched.
    """
    import re

    from irdiff.bundle import SCHEMA

    if filter:
        try:
            re.compile(filter)
        except re.error as e:
            raise CaptureError(f"--filter {filter!r}: not a regular expression: {e}") from None
    if target:
        from irdiff.target import TargetError, parse_target

        try:
            target = parse_target(target).name
        except TargetError as e:
            raise CaptureError(str(e)) from None
    cmd = program_command(command)
    if shutil.which(cmd[0]) is None and not os.path.exists(cmd[0]):
        raise CaptureError(f"program not found: {cmd[0]}")
    root = Path(out).resolve()
    _prepare_directory(root, force)
    from irdiff.capture.hooks import STATE_DIR, CaptureConfig, atomic_write

    (root / STATE_DIR / "hashes").mkdir(parents=True)
    manifest = {
        "schema": SCHEMA,
        "suite": CAPTURE_SUITE,
        "target": target or "",
        "triton_version": "",
        "ptxas_version": "",
        "command": cmd,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "shape": {},
        "pair": [],
        "variants": [],
        "runs": {},
    }
    atomic_write(root / "manifest.json", json.dumps(manifest, indent=1))

    pkg = Path(__file__).resolve().parent.parent
    bootstrap = Path(__file__).resolve().parent / "bootstrap"
    env = dict(os.environ if env is None else env)
    env.update(CaptureConfig(root, filter, target, launches).to_env())
    env["IRDIFF_CAPTURE_PKG"] = str(pkg)
    env["PYTHONPATH"] = str(bootstrap) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")

    t0 = time.perf_counter()
    code = _run_forwarding_signals(cmd, env)
    program_seconds = time.perf_counter() - t0

    result = CaptureResult(directory=root, exit_code=code, program_seconds=program_seconds)
    m = json.loads((root / "manifest.json").read_text())
    result.kernels = list(m.get("variants", []))
    state = root / STATE_DIR
    result.processes = len(list((state / "pids").glob("*"))) if (state / "pids").is_dir() else 0
    skipped = state / "skipped.txt"
    if skipped.is_file():
        result.skipped = skipped.read_text().split()
    errors = state / "errors.log"
    if errors.is_file() and errors.read_text().strip():
        result.warnings.append(f"hook errors were logged in {errors}")
    if result.processes == 0:
        result.warnings.append(
            "no Python process of the program imported triton with the hooks installed "
            "(nothing compiled, or Python was started with -S/-I/-E)"
        )

    if not result.kernels and result.processes and target is None:
        from irdiff.compile import local_gpu_capability

        if local_gpu_capability() is None:
            result.warnings.append(
                "no CUDA GPU here, so the program's kernel launches fail before compiling: "
                "capture without a GPU with --target (e.g. --target sm90)"
            )

    t1 = time.perf_counter()
    if result.kernels:
        try:
            result.warnings += _finalize(root, result.kernels, env, explain=explain, sass=sass, jobs=jobs)
        except (KeyboardInterrupt, Interrupted):
            result.warnings.append(
                f"after-run step interrupted: SASS/registers/compiler log may be missing; "
                f"complete them with: python -m irdiff.capture.finalize {root}"
            )
    result.finalize_seconds = time.perf_counter() - t1
    _write_capture_json(root, cmd, result, filter, target, launches)
    return result


def _run_forwarding_signals(cmd: list[str], env: dict[str, str]) -> int:
    """Run the program with inherited stdio; SIGINT reaches it from the terminal (the parent ignores it while
    waiting), SIGTERM/SIGHUP sent to irdiff are forwarded. Returns the exit status (``128 + N`` for signal N)."""
    try:
        proc = subprocess.Popen(cmd, env=env)
    except OSError as e:
        raise CaptureError(f"cannot start {cmd[0]}: {e.strerror or e}") from None
    forwarded = (signal.SIGTERM, signal.SIGHUP)
    old: dict[int, Any] = {}

    def forward(signum: int, _frame: Any) -> None:
        proc.send_signal(signum)

    old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in forwarded:
        old[sig] = signal.signal(sig, forward)
    try:
        code = proc.wait()
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)
    return 128 - code if code < 0 else code


def _finalize(
    root: Path, kernels: list[str], env: dict[str, str], *, explain: bool, sass: bool, jobs: int
) -> list[str]:
    """Run :mod:`irdiff.capture.finalize` once per Python interpreter that captured kernels (its own Triton)."""
    from irdiff.capture.hooks import ENV_DIR

    by_python: dict[str, list[str]] = {}
    for name in kernels:
        try:
            meta = json.loads((root / name / "variant.json").read_text()).get("metadata", {})
        except (OSError, ValueError):
            continue
        py = str(meta.get("python") or sys.executable)
        by_python.setdefault(py if os.path.exists(py) else sys.executable, []).append(name)
    fenv = {k: v for k, v in env.items() if k != ENV_DIR}
    fenv["IRDIFF_CAPTURE_LOAD"] = "1"  # the bootstrap loads irdiff from the same place, installs no hooks
    warnings: list[str] = []
    for py, names in by_python.items():
        args = [py, "-m", "irdiff.capture.finalize", str(root)]
        args += [f"--variant={n}" for n in names]
        args += [f"--jobs={jobs}"] if jobs else []
        args += ["--explain"] if explain else []
        args += ["--sass"] if sass else []
        proc = subprocess.run(args, env=fenv, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            warnings.append(f"finalize failed ({py}): {tail}")
            continue
        try:
            warnings += json.loads(proc.stdout.strip().splitlines()[-1]).get("errors", [])
        except (ValueError, IndexError):
            warnings.append(f"finalize ({py}): unreadable report: {proc.stdout[-300:]!r} {proc.stderr[-300:]!r}")
    return warnings


def _write_capture_json(
    root: Path, cmd: list[str], r: CaptureResult, filter: str | None, target: str | None, launches: int
) -> None:
    from irdiff.capture.hooks import atomic_write

    d = asdict(r)
    d["directory"] = str(r.directory)
    d.update({"command": cmd, "cwd": os.getcwd(), "filter": filter, "target": target, "launches": launches})
    d["program_seconds"] = round(r.program_seconds, 3)
    d["finalize_seconds"] = round(r.finalize_seconds, 3)
    atomic_write(root / "capture.json", json.dumps(d, indent=1))
