"""Complete captured kernels after the program has exited: SASS, resources, and the compiler's reasoning.

The hooks inside the program only copy the stage files (cheap); this step does what costs seconds, outside the
program's run time, in the *program's* Python (its Triton's ``ptxas``/``cuobjdump``, not irdiff's):

* SASS, the ``ptxas -v`` report (registers, spills, stack) and static shared memory, written by the compile
  driver's own :func:`irdiff.compile.worker.save_compiled` from the captured stages. The program's own ptxas
  output was not captured, so ptxas is re-run on the PTX — with the binary Triton ran when it compiled the kernel
  (``metadata["ptxas_path"]``, recorded by the hooks: TorchInductor sets ``TRITON_PTXAS_PATH`` inside the program,
  and the PTX ``.version`` follows that ptxas), falling back to the other ptxas binaries at hand
  (:func:`ptxas_candidates`); the register count is cross-checked with the captured cubin;
* the launches sampled by the hooks (``launches.jsonl`` and per-process counts) → ``metadata["launches"]``;
* with ``explain``: the captured TTIR is compiled once more, in a separate process, with
  ``TRITON_ENABLE_LLVM_DEBUG`` (coalescing and pipelining reasoning, as the compile driver records it) →
  ``llvm-debug.log``; ``metadata["explain"]["reproduced"]`` says whether that compile gave the same TTGIR (up to
  SSA value names, which Triton takes from locations a TTIR file does not carry for block arguments) and the same
  PTX as the captured kernel. The compile uses the captured options, the captured PTX version and the ptxas that
  built the kernel. Only then is the log offered to the diagnostics; otherwise it is kept as
  ``llvm-debug.unreproduced.log`` (e.g. an artifact made by another Triton version).

Run as ``python -m irdiff.capture.finalize DIR [--jobs N] [--no-explain] [--variant NAME ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from irdiff import stages
from irdiff.bundle import LOG_FILES, VariantResult, load_variant_dir
from irdiff.capture.hooks import STATE_DIR, atomic_write

UNREPRODUCED_LOG = "llvm-debug.unreproduced.log"
# Environment variables the explain compile must not inherit from the program: they write files elsewhere
# (dumps, overrides) or would capture the explain compile itself.
SIDE_EFFECT_ENV = {
    "IRDIFF_CAPTURE_DIR",
    "TRITON_KERNEL_DUMP",
    "TRITON_DUMP_DIR",
    "TRITON_KERNEL_OVERRIDE",
    "TRITON_OVERRIDE_DIR",
    "MLIR_ENABLE_DUMP",
    "MLIR_DUMP_PATH",
    "LLVM_IR_ENABLE_DUMP",
    "NVPTX_ENABLE_DUMP",
    "TRITON_INTERPRET",
    "TRITON_CACHE_MANAGER",
    "TRITON_REPRODUCER_PATH",
}

# Options of ``triton.compile`` that the explain compile copies from the captured metadata (the backend derives
# the rest from the target, as it did for the original compile).
EXPLAIN_OPTIONS = (
    "num_warps",
    "num_ctas",
    "num_stages",
    "maxnreg",
    "enable_fp_fusion",
    "enable_reflect_ftz",
    "launch_cooperative_grid",
    "launch_pdl",
    "debug",
    "sanitize_overflow",
    "default_dot_input_precision",
    "max_num_imprecise_acc_default",
    "ptx_version",
    "sched4reg",
    "instrumentation_mode",
)


class StoredKernel:
    """The two attributes :func:`~irdiff.compile.worker.save_compiled` reads from a ``CompiledKernel`` (``asm``
    with a lazy ``"sass"``, ``metadata``), rebuilt from a saved variant directory."""

    def __init__(self, v: VariantResult):
        try:
            from triton.compiler.compiler import AsmDict  # lazily disassembles "sass" from "cubin"

            asm: dict[str, Any] = AsmDict()
        except ImportError:  # pragma: no cover - Triton < 3.6 is refused earlier
            asm = {}
        for stage in (s.name for s in stages.text_stages() if s.origin == "triton"):
            if stage in v.stages:
                asm[stage] = v.text(stage)
        cubin = v.path("cubin")
        if cubin is not None and cubin.is_file():
            asm["cubin"] = cubin.read_bytes()
        self.asm = asm
        self.metadata = SimpleNamespace(**v.metadata)


def arch_of(v: VariantResult) -> int | None:
    """CUDA compute capability of a captured kernel (``metadata.target.arch``), None for other backends."""
    from irdiff.target import Target, TargetError, parse_target

    t = Target.from_triton(v.metadata.get("target"))
    if t is None:
        try:
            t = parse_target(v.target or "", supported_only=False)
        except TargetError:
            return None
    return t.capability or None


def merge_launches(v: VariantResult, directory: Path) -> None:
    """Fold ``launches.jsonl`` (sampled launches) and ``.capture/launches-<pid>.json`` /
    ``.capture/autotune-<pid>.json`` (counts per process) into ``metadata["launches"] = {"count": N, "autotune": M,
    "samples": [{"grid": [x, y, z], "args": {...}}, ...]}``: ``M`` of the ``N`` launches were an autotuner's
    benchmark runs (TorchInductor or ``triton.autotune`` timing each config before the program uses the best)."""
    samples: list[dict[str, Any]] = []
    p = Path(v.directory) / "launches.jsonl"
    if p.is_file():
        for line in p.read_text().splitlines():
            try:
                samples.append(json.loads(line))
            except ValueError:
                continue
    count = _sum_counts(directory, "launches-*.json", v.name)
    autotune = _sum_counts(directory, "autotune-*.json", v.name)
    if samples or count:
        v.metadata["launches"] = {"count": count or len(samples), "autotune": autotune, "samples": samples}


def _sum_counts(directory: Path, pattern: str, name: str) -> int:
    total = 0
    for c in (directory / STATE_DIR).glob(pattern):
        try:
            total += int(json.loads(c.read_text()).get(name, 0))
        except (ValueError, OSError, AttributeError):
            continue
    return total


def trusted_ptxas(arch: int) -> list[str]:
    """The ptxas binaries this environment offers (existing, executable, no duplicates): ``TRITON_PTXAS_PATH`` /
    ``TRITON_PTXAS_BLACKWELL_PATH`` of this environment, this Triton's ptxas for ``arch``, the other ptxas bundled
    with Triton, the one bundled with torch's CUDA wheels (``torch/bin/ptxas``, which TorchInductor hands to
    Triton), and ``ptxas`` on ``PATH``. Only these are ever run: a path written in a bundle is data, not a
    program to execute."""
    import importlib.util
    import shutil

    from irdiff.compile import compat

    paths: list[str | None] = [
        os.environ.get("TRITON_PTXAS_PATH"),
        os.environ.get("TRITON_PTXAS_BLACKWELL_PATH"),
    ]
    try:
        paths += [compat.ptxas_for_arch(arch), compat.tool_path("ptxas"), compat.tool_path("ptxas-blackwell")]
    except Exception:  # noqa: BLE001 - no NVIDIA backend: only the recorded/explicit binaries
        pass
    try:
        spec = importlib.util.find_spec("torch")  # locates the package without importing it
    except (ImportError, ValueError):
        spec = None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        paths.append(os.path.join(loc, "bin", "ptxas"))
    paths.append(shutil.which("ptxas"))
    return [p for p in dict.fromkeys(x for x in paths if x) if os.path.isfile(p) and os.access(p, os.X_OK)]


def recorded_ptxas(v: VariantResult, arch: int, keys: tuple[str, ...] = ("ptxas_path",)) -> str | None:
    """The first ptxas the record names (``metadata[key]`` for ``key`` in ``keys``) that is one of
    :func:`trusted_ptxas` (compared by resolved path), else None. The record only chooses *among* this
    environment's binaries; a path it names that is not one of them is never run."""
    trusted = {os.path.realpath(p): p for p in trusted_ptxas(arch)}
    for key in keys:
        named = v.metadata.get(key)
        if isinstance(named, str) and named and os.path.realpath(named) in trusted:
            return trusted[os.path.realpath(named)]
    return None


def ptxas_candidates(v: VariantResult, arch: int) -> list[str]:
    """ptxas binaries to assemble a captured kernel's PTX with, best first: the one Triton ran when it compiled
    the kernel (``metadata["ptxas_path"]``, recorded by the hooks) when it is one of :func:`trusted_ptxas`, then
    the others of :func:`trusted_ptxas`. A PTX file made for a newer CUDA than a ptxas fails there
    (``Unsupported .version``); a newer ptxas assembles older PTX."""
    first = recorded_ptxas(v, arch)
    return list(dict.fromkeys([*([first] if first else []), *trusted_ptxas(arch)]))


def finalize_variant(vdir: Path, directory: Path, explain: bool) -> str | None:
    """Complete one captured variant in place; returns an error line or None. Idempotent."""
    from irdiff.compile.worker import save_compiled

    v = load_variant_dir(vdir)
    if v.metadata.get("finalized"):
        return None
    merge_launches(v, directory)
    arch = arch_of(v)
    error = None
    if arch is not None and "ptx" in v.stages:
        try:
            save_compiled(StoredKernel(v), v, vdir, arch, "", ptxas=ptxas_candidates(v, arch))
        except Exception as e:  # noqa: BLE001 - keep the stages; report the missing resources
            error = f"{v.name}: resources not computed: {type(e).__name__}: {e}"
        if explain and "ttir" in v.stages:
            err = explain_variant(v)
            error = error or err
    v.metadata["finalized"] = True
    atomic_write(vdir / "variant.json", json.dumps(v.to_json(), indent=1, default=str))
    return error


def explain_variant(v: VariantResult) -> str | None:
    """Recompile the captured TTIR in a child process with the LLVM debug log on; write ``llvm-debug.log``."""
    from irdiff.compile.worker import LLVM_DEBUG_TYPES

    vdir = Path(v.directory)
    # The ptxas that assembled the kernel (the after-run report's, else the one recorded at compile time): Triton
    # runs it at the end of the compile, and a PTX version newer than it supports would fail there.
    arch = arch_of(v)
    ptxas = recorded_ptxas(v, arch, ("ptxas_rerun", "ptxas_path")) if arch is not None else None
    with tempfile.TemporaryDirectory(prefix="irdiff-explain-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in SIDE_EFFECT_ENV}
        env.update(
            {
                "TRITON_ENABLE_LLVM_DEBUG": "1",
                "TRITON_LLVM_DEBUG_ONLY": LLVM_DEBUG_TYPES,
                "TRITON_CACHE_DIR": str(Path(tmp) / "cache"),
                "TRITON_ALWAYS_COMPILE": "1",
            }
        )
        if ptxas:  # Triton's knobs read these per call (``knobs.nvidia.ptxas`` / ``ptxas_blackwell``)
            env["TRITON_PTXAS_PATH"] = env["TRITON_PTXAS_BLACKWELL_PATH"] = ptxas
        log = Path(tmp) / "stderr.log"
        with open(log, "w") as err:
            proc = subprocess.run(
                [sys.executable, "-m", "irdiff.capture.finalize", "--explain-one", str(vdir), tmp],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=env,
            )
        text = log.read_text(errors="replace")
        result_file = Path(tmp) / "result.json"
        outcome = json.loads(result_file.read_text()) if result_file.is_file() else {}
    if proc.returncode != 0 or not outcome:
        tail = [ln for ln in text.splitlines() if ln.strip()][-1:] or [f"exit status {proc.returncode}"]
        v.metadata["explain"] = {"error": tail[0]}
        return f"{v.name}: compiler log not recorded: {tail[0]}"
    lines = [ln for ln in text.splitlines() if not (ln.startswith("ptxas") or ln.startswith("warning:"))]
    if not outcome.get("reproduced"):
        # This Triton does not turn the TTIR into the captured TTGIR/PTX (another version or options): its log
        # would describe another kernel, so it is kept aside and not offered to the diagnostics.
        (vdir / UNREPRODUCED_LOG).write_text("\n".join(lines) + "\n")
        v.metadata["explain"] = {"log": UNREPRODUCED_LOG, **outcome}
        return None
    (vdir / LOG_FILES["llvm_debug"]).write_text("\n".join(lines) + "\n")
    v.logs["llvm_debug"] = LOG_FILES["llvm_debug"]
    v.metadata["explain"] = {"log": LOG_FILES["llvm_debug"], **outcome}
    return None


def explain_one(vdir: Path, tmp: Path) -> int:
    """Child side of :func:`explain_variant`: compile ``ttir.mlir`` for the captured target and options."""
    import triton
    from triton.backends.compiler import GPUTarget

    v = load_variant_dir(vdir)
    t = v.metadata.get("target") or {}
    target = GPUTarget(t.get("backend", "cuda"), t.get("arch"), t.get("warp_size", 32))
    src = tmp / f"{re.sub(r'[^A-Za-z0-9_]', '_', v.kernel)[:100] or 'kernel'}.ttir"  # a name, never a path
    src.write_text(v.text("ttir"))
    opts = {}
    for k in EXPLAIN_OPTIONS:
        val = v.metadata.get(k)
        if val is not None:
            opts[k] = tuple(val) if isinstance(val, list) else val
    if "ptx_version" not in opts and (pv := ptx_version_of(v.text("ptx"))) is not None:
        # Triton derives it from its ptxas' CUDA version (``get_ptx_version_from_options``) and writes it as the
        # PTX ``.version``: the captured one is what the original compile used.
        opts["ptx_version"] = pv
    k = triton.compile(str(src), target=target, options=opts)
    same_ttgir = same_mlir("ttgir", k.asm.get("ttgir", ""), v.text("ttgir"))
    same_ptx = _strip_ptx(k.asm.get("ptx", "")) == _strip_ptx(v.text("ptx"))
    (tmp / "result.json").write_text(
        json.dumps({"reproduced": same_ttgir and same_ptx, "ttgir": same_ttgir, "ptx": same_ptx})
    )
    return 0


def ptx_version_of(ptx: str) -> int | None:
    """``.version 9.0`` → 90 (Triton's ``ptx_version`` option), None when the PTX has no ``.version`` line."""
    m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
    return int(m.group(1)) * 10 + int(m.group(2)) if m else None


def same_mlir(stage: str, a: str, b: str) -> bool:
    """Whether two TTIR/TTGIR texts are the same IR up to locations and SSA value names: equal line by line in
    the normalizer's shape form (:func:`irdiff.normalize.normalize`: locations dropped, every SSA value and block
    argument erased to its class, layouts named by content). Value names are not compared because Triton derives
    them from name locations, which a TTIR file read back does not give block arguments (``%r0_offset`` in the
    program's compile is ``%arg5`` in a compile from the file); the PTX comparison then checks the code itself."""
    from irdiff.normalize import normalize

    na, nb = normalize(stage, a), normalize(stage, b)
    if na.fallback or nb.fallback:
        return _strip_locs(a) == _strip_locs(b)
    return na.shapes == nb.shapes


def _strip_locs(text: str) -> str:
    """MLIR without location info (the explain compile reads locations back from the TTIR file)."""
    out = []
    for ln in text.splitlines():
        if ln.startswith("#loc"):
            continue
        out.append(re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", ln))
    return "\n".join(out)


def _strip_ptx(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not re.match(r"\s*(\.loc|\.file|//)", ln))


def finalize_directory(
    directory: Path, *, jobs: int = 0, explain: bool = True, variants: list[str] | None = None
) -> list[str]:
    """Finalize every variant listed in ``DIR/manifest.json`` (or ``variants``); returns error lines."""
    from irdiff.bundle import MANIFEST_SCHEMA, confined, read_record, variant_dirname

    m = read_record(directory / "manifest.json", MANIFEST_SCHEMA, "manifest")
    names = variants or list(m.get("variants", []))
    dirs = [confined(directory, variant_dirname(name)) for name in names]  # never a path outside the capture
    n = jobs or max(1, min(len(names), os.cpu_count() or 1))
    if n == 1 or len(names) == 1:
        results = [_safe_finalize(d, directory, explain) for d in dirs]
    else:
        # Processes, not threads: save_compiled redirects file descriptors 1 and 2 while it disassembles.
        import multiprocessing

        with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_safe_finalize, dirs, repeat(directory), repeat(explain)))
    _update_manifest(directory)
    return [r for r in results if r]


def _update_manifest(directory: Path) -> None:
    """Record the ptxas versions the finalized kernels were assembled with in the manifest."""
    from irdiff.capture.hooks import locked

    with locked(directory):
        mf = directory / "manifest.json"
        m = json.loads(mf.read_text())
        versions = set(filter(None, str(m.get("ptxas_version") or "").split(", ")))
        for name in m.get("variants", []):
            try:
                res = json.loads((directory / name / "variant.json").read_text()).get("resources", {})
            except (OSError, ValueError):
                continue
            if res.get("ptxas_version"):
                versions.add(res["ptxas_version"])
        m["ptxas_version"] = ", ".join(sorted(versions))
        atomic_write(mf, json.dumps(m, indent=1))


def _safe_finalize(vdir: Path, directory: Path, explain: bool) -> str | None:
    try:
        return finalize_variant(vdir, directory, explain)
    except Exception as e:  # noqa: BLE001
        return f"{vdir.name}: {type(e).__name__}: {e}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m irdiff.capture.finalize", description=__doc__.splitlines()[0])
    p.add_argument("directory", type=Path)
    p.add_argument("extra", nargs="?", type=Path)
    p.add_argument("--jobs", type=int, default=0)
    p.add_argument("--no-explain", action="store_true")
    p.add_argument("--variant", action="append", default=None)
    p.add_argument("--explain-one", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.explain_one:
        return explain_one(a.directory, a.extra)
    from irdiff.bundle import BundleError

    try:
        errors = finalize_directory(a.directory, jobs=a.jobs, explain=not a.no_explain, variants=a.variant)
    except BundleError as err:
        from irdiff.textsafe import one_line

        print(f"error: {one_line(str(err))}", file=sys.stderr)
        return 2
    for e in errors:
        print(f"warning: {e}", file=sys.stderr)
    print(json.dumps({"errors": errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
