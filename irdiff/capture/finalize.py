"""Complete captured kernels after the program has exited: resources, and on demand SASS and the compiler's reasoning.

The hooks inside the program only copy the stage files and keep Triton's own ``ptxas -v`` report (cheap); this
step runs outside the program's run time, in the *program's* Python (its Triton's ``ptxas``/``cuobjdump``, not
irdiff's), in a few processes however many kernels there are (:func:`finalize_directory`):

* resources for every kernel: the ``ptxas -v`` report (registers, spills, stack) the hooks kept from the compile
  itself; ptxas is re-run on the PTX only for kernels loaded from Triton's cache (with the binary Triton ran when it
  compiled the kernel, ``metadata["ptxas_path"]``, falling back to the other ptxas binaries at hand:
  :func:`ptxas_candidates`); the register count and static shared memory are read from all captured cubins in one
  ``cuobjdump --dump-resource-usage`` call (the cubins packed into one fatbin, :func:`pack_fatbin`);
* the launches sampled by the hooks (``launches.jsonl`` and per-process counts) → ``metadata["launches"]``;
* with ``sass`` (``irdiff capture --sass``, or ``irdiff diff`` on demand for the kernels of pairs whose PTX
  differs): SASS, one ``cuobjdump -sass`` call per worker thread over a fatbin of its share of the kernels,
  converted to the text ``CompiledKernel.asm["sass"]`` gives (:func:`sass_of_listing`);
* with ``explain`` (``irdiff capture --explain``, or ``irdiff diff`` on demand): the captured TTIR is compiled once
  more with ``TRITON_ENABLE_LLVM_DEBUG`` (coalescing and pipelining reasoning, as the compile driver records it) →
  ``llvm-debug.log``, by one long-lived worker process per core, each compiling its share of the kernels;
  ``metadata["explain"]["reproduced"]`` says whether that compile gave the same TTGIR (up to SSA value names,
  which Triton takes from locations a TTIR file does not carry for block arguments) and the same PTX as the
  captured kernel. The compile uses the captured options, the captured PTX version and the ptxas that built the
  kernel. Only then is the log offered to the diagnostics; otherwise it is kept as ``llvm-debug.unreproduced.log``
  (e.g. an artifact made by another Triton version).

Each part is done once per kernel (``metadata["finalized_parts"]``). Run as ``python -m irdiff.capture.finalize
DIR [--jobs N] [--sass] [--explain] [--variant NAME ...]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from irdiff.bundle import LOG_FILES, VariantResult, load_variant_dir
from irdiff.capture.hooks import STATE_DIR, atomic_write
from irdiff.interrupt import thread_map

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


def explain_variant(v: VariantResult) -> str | None:
    """Recompile the captured TTIR in a child process with the LLVM debug log on; write ``llvm-debug.log``."""
    errors = explain_variants([v])
    return errors[0] if errors else None


def _ptxas_of_variant(v: VariantResult) -> str | None:
    """The ptxas that assembled the kernel (the after-run report's, else the one recorded at compile time): Triton
    runs it at the end of the compile, and a PTX version newer than it supports would fail there. Only a binary
    of :func:`trusted_ptxas` is returned: the record chooses among them, it never names one to run."""
    arch = arch_of(v)
    return recorded_ptxas(v, arch, ("ptxas_rerun", "ptxas_path")) if arch is not None else None


def explain_variants(vs: list[VariantResult]) -> list[str]:
    """Recompile each captured TTIR of ``vs`` with the LLVM debug log on, all in *one* child process (``python -m
    irdiff.capture.finalize --explain-batch``: Triton imported once, file descriptor 2 sent to one log per kernel);
    write each kernel's ``llvm-debug.log``. Returns error lines."""
    from irdiff.compile.worker import LLVM_DEBUG_TYPES

    if not vs:
        return []
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="irdiff-explain-") as tmp:
        env = {k: x for k, x in os.environ.items() if k not in SIDE_EFFECT_ENV}
        env.update(
            {
                "TRITON_ENABLE_LLVM_DEBUG": "1",
                "TRITON_LLVM_DEBUG_ONLY": LLVM_DEBUG_TYPES,
                "TRITON_CACHE_DIR": str(Path(tmp) / "cache"),
                "TRITON_ALWAYS_COMPILE": "1",
            }
        )
        jobs = [{"dir": str(v.directory), "ptxas": _ptxas_of_variant(v)} for v in vs]
        (Path(tmp) / "jobs.json").write_text(json.dumps(jobs))
        with open(Path(tmp) / "child.log", "w") as err:
            proc = subprocess.run(
                [sys.executable, "-m", "irdiff.capture.finalize", "--explain-batch", tmp, tmp],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=env,
            )
        child_tail = [ln for ln in (Path(tmp) / "child.log").read_text(errors="replace").splitlines() if ln.strip()]
        for i, v in enumerate(vs):
            log_file, result_file = Path(tmp) / f"{i}.log", Path(tmp) / f"{i}.json"
            text = log_file.read_text(errors="replace") if log_file.is_file() else ""
            outcome = json.loads(result_file.read_text()) if result_file.is_file() else {}
            problem = _record_explain(v, text, outcome, child_tail[-1:] or [f"exit status {proc.returncode}"])
            if problem:
                errors.append(problem)
    return errors


def _record_explain(v: VariantResult, text: str, outcome: dict[str, Any], fallback: list[str]) -> str | None:
    vdir = Path(v.directory)
    if not outcome or outcome.get("error"):
        tail = [outcome["error"]] if outcome.get("error") else [ln for ln in text.splitlines() if ln.strip()][-1:]
        tail = tail or fallback
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


def explain_batch(tmp: Path) -> int:
    """Child side of :func:`explain_variants`: for job ``i`` of ``tmp/jobs.json``, compile its TTIR with fd 2 in
    ``tmp/<i>.log`` and write the outcome to ``tmp/<i>.json``."""
    import traceback

    jobs = json.loads((tmp / "jobs.json").read_text())
    for i, job in enumerate(jobs):
        if job.get("ptxas"):  # Triton's knobs read these per call (``knobs.nvidia.ptxas`` / ``ptxas_blackwell``)
            os.environ["TRITON_PTXAS_PATH"] = os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = job["ptxas"]
        else:
            os.environ.pop("TRITON_PTXAS_PATH", None)
            os.environ.pop("TRITON_PTXAS_BLACKWELL_PATH", None)
        sys.stderr.flush()
        saved = os.dup(2)
        with open(tmp / f"{i}.log", "w") as log:
            os.dup2(log.fileno(), 2)
            work = tmp / f"w{i}"
            work.mkdir(exist_ok=True)
            try:
                explain_one(Path(job["dir"]), work)
                outcome = json.loads((work / "result.json").read_text())
            except Exception as e:  # noqa: BLE001 - one kernel's failure does not stop the others
                traceback.print_exc()
                outcome = {"error": f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"}
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
        (tmp / f"{i}.json").write_text(json.dumps(outcome))
    return 0


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
    directory: Path,
    *,
    jobs: int = 0,
    explain: bool = False,
    sass: bool = False,
    variants: list[str] | None = None,
) -> list[str]:
    """Complete the variants listed in ``DIR/manifest.json`` (or ``variants``) in a few processes; returns error
    lines. Idempotent: each part is done once per variant (``metadata["finalized_parts"]``).

    Always (cheap, every kernel): launches, the ptxas ``-v`` report (the one the hooks kept from Triton's own ptxas
    run; ptxas is re-run only for kernels loaded from Triton's cache), the cubin's resource usage for all
    kernels in *one* ``cuobjdump --dump-resource-usage`` call (the cubins packed into one fatbin), and the code
    fingerprint (:mod:`irdiff.capture.fingerprint`) by which ``irdiff diff`` recognizes an unchanged kernel.
    With ``sass``: SASS, one ``cuobjdump -sass`` call per worker over a fatbin of its share of the kernels
    (disassembly costs about 0.6 s of CPU per kernel in cuobjdump/nvdisasm 12.8–13.1, whatever the batching).
    With ``explain``: the compiler's reasoning log, from long-lived worker processes (at most ``jobs``, one per four
    kernels), each recompiling its share of the kernels in one Python (Triton imported once).

    :param jobs: worker threads/processes (default: the CPU count).
    """
    return finalize_many([(directory, variants, explain)], jobs=jobs, sass=sass)


def finalize_many(
    directories: list[tuple[Path, list[str] | None, bool]], *, jobs: int = 0, sass: bool = False
) -> list[str]:
    """:func:`finalize_directory` for several captures at once (``(directory, variants or None for all, explain)``
    each), as ``irdiff diff`` of two captures needs it for the kernels that differ: the SASS of each capture and
    the compiler logs of all of them (one pool of worker processes) are made at the same time."""
    from irdiff.bundle import MANIFEST_SCHEMA, confined, read_record, variant_dirname
    from irdiff.capture.fingerprint import fingerprint

    n_jobs = max(1, jobs or (os.cpu_count() or 1))
    errors: list[str] = []
    per_dir: list[tuple[Path, dict[str, VariantResult]]] = []
    explain_todo: list[VariantResult] = []
    for directory, variants, explain in directories:
        m = read_record(directory / "manifest.json", MANIFEST_SCHEMA, "manifest")
        names = variants or list(m.get("variants", []))
        dirs = {name: confined(directory, variant_dirname(name)) for name in names}  # never outside the capture
        loaded: dict[str, VariantResult] = {}
        for name in names:
            if not (dirs[name] / "variant.json").is_file():
                continue
            try:
                loaded[name] = load_variant_dir(dirs[name])
            except Exception as e:  # noqa: BLE001 - an unreadable variant is reported, the others go on
                errors.append(f"{name}: {type(e).__name__}: {e}")
        todo_res = [v for v in loaded.values() if "resources" not in _parts(v)]
        errors += _resources_batch(directory, todo_res, n_jobs)
        per_dir.append((directory, loaded))
        if explain:
            explain_todo += [
                v for v in loaded.values() if "explain" not in _parts(v) and "ttir" in v.stages and arch_of(v)
            ]
    tasks = []
    if sass:
        for _, loaded in per_dir:
            todo = [v for v in loaded.values() if "sass" not in _parts(v) and v.path("cubin") is not None]
            if todo:
                tasks.append((_sass_batch, todo, n_jobs))
    if explain_todo:
        tasks.append((_explain_batch, explain_todo, min(n_jobs, max(1, len(explain_todo) // 4))))
    if len(tasks) > 1:
        _import_triton_first()
        # each task waits on its own child processes
        for found in thread_map(lambda t: t[0](t[1], t[2]), tasks, len(tasks)):
            errors += found
    else:
        for fn, todo, n in tasks:
            errors += fn(todo, n)
    for directory, loaded in per_dir:
        for v in loaded.values():
            v.metadata["finalized"] = True
            code = fingerprint(v)
            if code is not None:
                v.metadata["fingerprint"] = code
            atomic_write(Path(v.directory) / "variant.json", json.dumps(v.to_json(), indent=1, default=str))
        _update_manifest(directory)
    return errors


def _parts(v: VariantResult) -> list[str]:
    parts = v.metadata.get("finalized_parts")
    if not isinstance(parts, list):
        parts = ["resources", "sass", "explain"] if v.metadata.get("finalized") else []
        v.metadata["finalized_parts"] = parts
    return parts


def _done(v: VariantResult, part: str) -> None:
    parts = _parts(v)
    if part not in parts:
        parts.append(part)


FATBIN_MAGIC = 0xBA55ED50


def pack_fatbin(cubins: list[tuple[str, bytes, int]]) -> bytes:
    """A fatbin holding several cubins, each named ``identifier = <name>`` in cuobjdump's listing.

    Layout (as CUDA's ``fatbinary`` writes it; ``fatbinary_section.h`` gives the 16-byte header: magic
    ``0xBA55ED50``, version 1, header size, payload size): per entry a 64-byte header — kind 2 (ELF), ``0x0101``,
    header size (64 + the name), payload size, compressed size 0, options offset 0, version 0.0, ``arch``, name
    offset and length, flags ``0x11`` (64-bit, Linux), two zero words — then the name and the 8-byte-padded cubin.

    :param cubins: ``(name, cubin bytes, arch)``; names are ASCII without NUL.
    """
    import struct

    body = b""
    for name, cubin, arch in cubins:
        payload = cubin + b"\0" * (-len(cubin) % 8)
        raw = name.encode("ascii", "replace")
        extra = raw + b"\0" * (8 - len(raw) % 8)
        head = struct.pack(
            "<HHIQIIHHIIIQQQ", 2, 0x0101, 64 + len(extra), len(payload), 0, 0, 0, 0, arch, 64, len(raw), 0x11, 0, 0
        )
        body += head + extra + payload
    return struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(body)) + body


def _listing_by_identifier(text: str) -> dict[str, str]:
    """Split a cuobjdump listing of a :func:`pack_fatbin` file into {identifier: its part of the listing}."""
    out: dict[str, str] = {}
    chunks = re.split(r"^Fatbin elf code:\s*$", text, flags=re.M)
    for chunk in chunks:
        m = re.search(r"^identifier = (.+)$", chunk, re.M)
        if m:
            out[m.group(1).strip()] = chunk
    return out


def _cuobjdump(args: list[str], cubins: list[tuple[str, bytes, int]]) -> dict[str, str]:
    """Run cuobjdump once over all ``cubins`` (packed into one fatbin); {name: its listing}."""
    from irdiff.compile import compat

    if not cubins:
        return {}
    with tempfile.TemporaryDirectory(prefix="irdiff-fatbin-") as d:
        path = Path(d) / "kernels.fatbin"
        path.write_bytes(pack_fatbin(cubins))
        proc = subprocess.run([compat.tool_path("cuobjdump"), *args, str(path)], capture_output=True)
    return _listing_by_identifier(proc.stdout.decode(errors="replace"))


def _cubins(vs: list[VariantResult]) -> list[tuple[str, bytes, int]]:
    out = []
    for v in vs:
        p, arch = v.path("cubin"), arch_of(v)
        if p is not None and p.is_file() and arch:
            out.append((v.name, p.read_bytes(), arch))
    return out


def _import_triton_first() -> None:
    """Import Triton in this thread before a thread pool needs it: the pools' tasks look up Triton's CUDA tools
    (:func:`irdiff.compile.compat.tool_path`), and two threads importing Triton at once fail on its circular
    imports (``cannot import name 'backends' from partially initialized module 'triton.backends'``, seen with
    Triton 3.6). A no-op once imported; without Triton the tasks report their own error."""
    with contextlib.suppress(ImportError):
        import triton  # noqa: F401


def _resources_batch(directory: Path, vs: list[VariantResult], n_jobs: int) -> list[str]:
    """Launches, ptxas report (kept or re-run, ``n_jobs`` at a time) and cubin resources (one cuobjdump call)."""
    from irdiff.bundle import Resources
    from irdiff.compile.worker import parse_ptxas_log, ptxas_version, run_ptxas

    errors: list[str] = []
    for v in vs:
        merge_launches(v, directory)
    if vs:
        _import_triton_first()

    def report(v: VariantResult) -> tuple[str, str] | None:
        arch = arch_of(v)
        kept = v.text("ptxas") if v.metadata.get("ptxas_report") == "captured" else ""
        if kept:  # the version is asked only of a binary of this environment (trusted_ptxas), never of the record's
            return kept, (recorded_ptxas(v, arch) if arch is not None else None) or ""
        if arch is None or "ptx" not in v.stages:
            return None
        args = [] if v.metadata.get("enable_fp_fusion", True) else ["--fmad=false"]
        args += str(v.metadata.get("ptx_options") or "").split()
        first = None
        for cand in ptxas_candidates(v, arch):
            log, path = run_ptxas(v.text("ptx"), arch, cand, args)
            first = first or (log, path)
            if "Used" in log:
                v.metadata["ptxas_rerun"] = path
                return log, path
        return first

    reports = thread_map(report, vs, n_jobs)
    versions: dict[str, str] = {}
    usage = _cuobjdump(["--dump-resource-usage"], _cubins(vs))
    for v, rep in zip(vs, reports):
        res = Resources(shared_bytes=int(v.metadata.get("shared", 0) or 0))
        vdir = Path(v.directory)
        if rep is not None:
            log, path = rep
            (vdir / LOG_FILES["ptxas"]).write_text(log if log.endswith("\n") else log + "\n")
            v.logs["ptxas"] = LOG_FILES["ptxas"]
            parse_ptxas_log(log, res)
            if path and path not in versions:
                versions[path] = ptxas_version(path)
            res.ptxas_version = versions.get(path, "")
        line = next((ln for ln in usage.get(v.name, "").splitlines() if "REG:" in ln), "")
        cub = {k: int(x) for k, x in re.findall(r"\b(REG|STACK|SHARED|LOCAL):(\d+)", line)}
        if cub:
            res.static_shared_bytes = cub.get("SHARED")
            if res.registers is not None and res.registers != cub.get("REG"):
                v.metadata["resources_note"] = (
                    f"the ptxas -v report says {res.registers} registers, the captured cubin uses {cub.get('REG')}: "
                    "registers and stack are the cubin's, spills unknown"
                )
                res.spill_store_bytes = res.spill_load_bytes = res.stack_bytes = None
            if res.registers is None and rep is None:
                v.metadata["resources_note"] = "no ptxas -v report: registers and stack from the cubin"
            res.registers = cub.get("REG", res.registers)
            if res.stack_bytes is None and "STACK" in cub:
                res.stack_bytes = cub["STACK"]
            if res.spill_store_bytes is None and cub.get("STACK") == 0:
                res.spill_store_bytes = res.spill_load_bytes = 0
        elif rep is None:
            errors.append(f"{v.name}: resources not computed (no ptxas report, no cubin resource usage)")
        v.resources = res
        _done(v, "resources")
    return errors


_FLINE = re.compile(r"\s*/\*\w{4,}\*/\s*([^;]*;)\s*/\* 0x(\w{16}) \*/\s*")
_FNAME = re.compile(r"\s*Function : (\w+)\s*")
_BRA = re.compile(r"(.*BRA(?:\.U)? )(0x\w+);")


def sass_of_listing(listing: str) -> str:
    """The SASS text Triton's ``CompiledKernel.asm["sass"]`` gives (``triton/tools/disasm.py: extract``: the first
    function, one ``ctrl<TAB>instruction`` line each, branch targets as ``LBB<i>`` labels), from a ``cuobjdump
    -sass`` listing of one cubin."""
    try:
        from triton.tools.disasm import processSassLines
    except ImportError:  # pragma: no cover - Triton without the disassembler helpers
        return listing
    lines = listing.splitlines()
    i = next((k for k, ln in enumerate(lines) if _FNAME.match(ln)), None)
    if i is None:
        return ""
    out = f"Function:{_FNAME.match(lines[i]).group(1)}\n"  # type: ignore[union-attr]
    i += 2  # .headerflags
    labels: dict[int, int] = {}
    buf: list[tuple[str, str]] = []
    while i + 1 < len(lines) and _FLINE.match(lines[i]):
        buf.append(processSassLines(lines[i], lines[i + 1], labels))
        i += 2
    for idx, (ctrl, asm) in enumerate(buf):
        if idx * 16 in labels:
            out += f"LBB{labels[idx * 16]}:\n"
        m = _BRA.match(asm)
        if m:
            asm = _BRA.sub(rf"\1LBB{labels[int(m.group(2), 16)]};", asm)
        out += ctrl + "\t" + asm + "\n"
    return out + "\n"


def _sass_batch(vs: list[VariantResult], n_jobs: int) -> list[str]:
    """SASS for ``vs``: ``n_jobs`` threads, each one cuobjdump call over a fatbin of its share."""
    from irdiff.bundle import STAGE_FILES

    if not vs:
        return []
    shares = [vs[k::n_jobs] for k in range(min(n_jobs, len(vs)))]
    _import_triton_first()
    listings = thread_map(lambda share: _cuobjdump(["-sass"], _cubins(share)), shares, len(shares))
    errors = []
    for share, listing in zip(shares, listings):
        for v in share:
            text = sass_of_listing(listing.get(v.name, ""))
            if not text.strip():
                errors.append(f"{v.name}: SASS not disassembled")
                continue
            (Path(v.directory) / STAGE_FILES["sass"]).write_text(text)
            v.stages["sass"] = STAGE_FILES["sass"]
            _done(v, "sass")
    return errors


def _explain_batch(vs: list[VariantResult], n_jobs: int) -> list[str]:
    """The compiler's reasoning log for ``vs``: ``n_jobs`` worker processes (``--explain-batch``), each compiling
    its share in one Python with the LLVM debug log on (see :func:`explain_variant` for what is recorded)."""
    if not vs:
        return []
    shares = [vs[k::n_jobs] for k in range(min(n_jobs, len(vs)))]
    _import_triton_first()

    def work(share: list[VariantResult]) -> list[str]:
        return explain_variants(share)

    results = thread_map(work, shares, len(shares))
    for v in vs:
        _done(v, "explain")
    return [e for r in results for e in r]


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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m irdiff.capture.finalize", description=__doc__.splitlines()[0])
    p.add_argument("directory", type=Path)
    p.add_argument("extra", nargs="?", type=Path)
    p.add_argument("--jobs", type=int, default=0)
    p.add_argument("--no-explain", action="store_true")
    p.add_argument("--variant", action="append", default=None)
    p.add_argument("--explain", action="store_true", help="Also record the compiler's reasoning log.")
    p.add_argument("--sass", action="store_true", help="Also disassemble SASS.")
    p.add_argument("--explain-one", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--explain-batch", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.explain_one:
        return explain_one(a.directory, a.extra)
    if a.explain_batch:
        return explain_batch(a.directory)
    from irdiff.bundle import BundleError

    try:
        errors = finalize_directory(
            a.directory, jobs=a.jobs, explain=a.explain and not a.no_explain, sass=a.sass, variants=a.variant
        )
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
