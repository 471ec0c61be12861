"""Each variant's correctness launches in a process of its own, so a fault in one cannot take the others down.

A CUDA fault (illegal or misaligned address, a kernel that never ends) leaves the process's CUDA context unusable:
every later call fails. So the runner launches each variant, at every shape, in a child process
(``python -m irdiff.run.isolate REQUEST.json OUTDIR``) that runs :func:`irdiff.run.runner.check_variant` and writes,
per shape, one JSON line when it starts and one with the result, and the outputs (``torch.save``, on the CPU) for
the comparison between variants. When a child dies or reports a CUDA error, the shape it was on gets the error
(the CUDA message or the exit signal, with the child's last stderr lines) and a fresh child carries on with the
next shape. The parent then compares the variants' outputs (:func:`irdiff.run.runner.combine`) and times only the
variants that ran.

Under ``--interpret`` the children run with ``TRITON_INTERPRET=1`` (the variable must be set before the kernels'
module is imported), so the same isolation covers the interpreter, whose loads read raw host addresses.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["check_isolated", "suite_ref_for_child"]

_CUDA_DEAD = ("CUDA error", "AcceleratorError", "illegal memory access", "misaligned address", "unspecified launch")


def suite_ref_for_child(suite: str) -> str:
    """``suite`` with a file path made absolute (the child may run in another directory)."""
    path_part, sep, name = suite.partition("::")
    if path_part.endswith(".py") or os.path.isfile(path_part):
        return str(Path(path_part).resolve()) + (sep + name if sep else "")
    return suite


def _child_env(interpret: bool) -> dict[str, str]:
    env = dict(os.environ)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    pkg_root = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def check_isolated(
    suite: str,
    variants: list[str],
    shapes: list[dict[str, int]],
    device: str,
    target: str,
    selector: Any = None,
    seed: int = 0,
    ttirs: Mapping[str, str] | None = None,
    interpret: bool = False,
    timeout_s: float = 900,
    log: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run :func:`~irdiff.run.runner.check_variant` for every variant at every shape outside this process.

    The jobs (shape by shape, variant by variant) go to one child process; when it dies or its CUDA context is
    lost, the job it was on is reported failed and a fresh child takes the next job.

    :returns: per shape, ``{name: VariantCheck}`` with the outputs loaded on the CPU (launch and inputs None).
    :raises RuntimeError: a child could not run a single job (its last stderr lines are in the message).
    """
    import torch

    from irdiff.run.runner import VariantCheck, _failed

    ref = suite_ref_for_child(suite)
    env = _child_env(interpret)
    jobs = [(v, i) for i in range(len(shapes)) for v in variants]
    per_shape: list[dict[str, Any]] = [{} for _ in shapes]
    with tempfile.TemporaryDirectory(prefix="irdiff-isolate-") as d:
        root = Path(d)
        start, attempt = 0, 0
        while start < len(jobs) and attempt <= len(jobs):
            attempt += 1
            stem = f"c{attempt}"
            req = {"suite": ref, "jobs": jobs, "shapes": shapes, "start": start, "device": device, "target": target,
                   "selector": selector, "seed": seed, "ttirs": dict(ttirs or {}), "interpret": interpret,
                   "stem": stem}  # fmt: skip
            req_file = root / f"{stem}.json"
            req_file.write_text(json.dumps(req, default=str))
            err_file = root / f"{stem}.stderr"
            timed_out = False
            with open(err_file, "w") as err:
                try:
                    proc = subprocess.run(
                        [sys.executable, "-m", "irdiff.run.isolate", str(req_file), str(root)],
                        stdout=err, stderr=err, env=env, timeout=timeout_s, check=False,
                    )  # fmt: skip
                    code = proc.returncode
                except subprocess.TimeoutExpired:
                    timed_out, code = True, -9
            lines = _read_lines(root / f"{stem}.jsonl")
            done = {ln["j"]: ln for ln in lines if "entry" in ln}
            started = [ln["j"] for ln in lines if ln.get("started")]
            for j, ln in done.items():
                name, i = jobs[j]
                out_file = root / f"{stem}-{j}.pt"
                outs = torch.load(out_file, map_location="cpu") if out_file.is_file() else {}
                if out_file.is_file():
                    out_file.unlink()
                per_shape[i][name] = VariantCheck(name, ln["entry"], ln["findings"], outs, ln.get("dtypes", {}))
            crashed = [j for j in started if j not in done]
            tail = [x for x in err_file.read_text(errors="replace").strip().splitlines() if x.strip()][-25:]
            if crashed:
                j = crashed[-1]
                name, i = jobs[j]
                why = f"timed out after {timeout_s:.0f} s" if timed_out else _exit_text(code)
                msg = f"the process running it ended ({why})" + ("\n" + "\n".join(tail) if tail else "")
                per_shape[i][name] = _failed(name, dict(shapes[i]), msg)
                if log:
                    log(f"{name}: failed at {i + 1} of {len(shapes)} shape(s) ({why}); continuing in a new process")
            elif code != 0 and not done:
                raise RuntimeError(
                    f"the runner's child process failed ({_exit_text(code)})" + (": " + "\n".join(tail) if tail else "")
                )
            start = max([*done, *crashed], default=start - 1) + 1
    return per_shape


def _child(req: dict[str, Any], out_dir: Path) -> int:
    """Runs in the child process (``TRITON_INTERPRET=1`` already set for the interpreter)."""
    import gc

    import torch

    from irdiff.run.runner import _failed, check_variant, error_text, set_allocator
    from irdiff.suite import load_suite

    if req.get("interpret"):
        from irdiff.run.interpret import _index_compat

        _index_compat()
    device = req["device"]
    set_allocator(device)
    suite = load_suite(req["suite"])
    stem = req["stem"]
    log = out_dir / f"{stem}.jsonl"
    shapes, jobs, ttirs = req["shapes"], req["jobs"], req.get("ttirs") or {}
    for j in range(int(req["start"]), len(jobs)):
        name, i = jobs[j]
        with open(log, "a") as f:
            f.write(json.dumps({"j": j, "started": True}) + "\n")
            f.flush()
            os.fsync(f.fileno())
        try:
            vc = check_variant(suite, name, shapes[i], device, req["target"], req.get("selector"),
                               int(req.get("seed", 0)), ttir=ttirs.get(name))  # fmt: skip
        except Exception as e:  # noqa: BLE001 - anything left is reported as the variant's failure
            vc = _failed(name, dict(shapes[i]), error_text(e))
        if vc.outputs:
            torch.save({k: v.detach().cpu() for k, v in vc.outputs.items()}, out_dir / f"{stem}-{j}.pt")
        with open(log, "a") as f:
            f.write(json.dumps({"j": j, "entry": vc.entry, "findings": vc.findings, "dtypes": vc.dtypes},
                               default=str) + "\n")  # fmt: skip
        err = str(vc.entry.get("error") or "")
        del vc
        gc.collect()
        if device.startswith("cuda"):
            if any(k in err for k in _CUDA_DEAD):
                return 3  # the context is gone: a fresh process takes the next job
            torch.cuda.empty_cache()
    return 0


def main(argv: list[str]) -> int:
    req = json.loads(Path(argv[0]).read_text())
    return _child(req, Path(argv[1]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
