"""Existing Triton artifacts as kernel collections: Triton cache entries and ``TRITON_KERNEL_DUMP`` directories.

Both hold one directory per compiled kernel with the stage files named after the kernel:

* the cache (``TRITON_CACHE_DIR``, default ``~/.triton/cache``; ``triton/runtime/cache.py``): ``<hash>/`` with
  ``<name>.json`` (metadata: target, options, ``shared``), ``__grp__<name>.json``, ``<name>.source``, ``.ttir``,
  ``.ttgir``, ``.llir``, ``.ptx``, ``.cubin``;
* the dump (``TRITON_KERNEL_DUMP=1`` + ``TRITON_DUMP_DIR``; ``triton/compiler/compiler.py: fn_dump_manager``):
  ``<src hash>/`` with ``.ttir .ttgir .llir .ptx .cubin`` and ``.sass`` (3.5+), but no metadata JSON; the target
  and ``num_warps`` are then read from the TTGIR module attributes (``ttg.target = "cuda:90"``,
  ``"ttg.num-warps" = 4``).

:func:`load_artifacts` converts one such directory (a single kernel directory or a root holding many) into a
bundle in a temporary directory, in the layout of :mod:`irdiff.bundle`, so that the differ, diagnostics and
renderers read it like any other. The specialization is read from the TTIR function signature (types and
``tt.divisibility``; constexpr parameters are not in the IR, so they are missing); the Python source is copied
when the path in the TTIR's ``#loc`` still exists on this machine.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from irdiff import stages
from irdiff.bundle import SCHEMA, STAGE_FILES, ArgSpec, Bundle, BundleError, VariantResult

__all__ = ["ARTIFACT_SUITES", "find_kernel_dirs", "is_artifact_dir", "load_artifacts", "ttir_signature"]

ARTIFACT_SUITES = ("triton-cache", "triton-dump")
_IR_SUFFIXES = (".ttir", ".ttgir", ".ptx")


def _is_kernel_dir(p: Path) -> bool:
    try:
        return p.is_dir() and any(f.suffix in _IR_SUFFIXES for f in p.iterdir())
    except OSError:
        return False


def find_kernel_dirs(path: Path, limit: int = 100000) -> list[Path]:
    """Kernel directories at ``path`` itself, or one level below it (a cache or dump root), sorted by mtime."""
    if _is_kernel_dir(path):
        return [path]
    if not path.is_dir():
        return []
    dirs = [d for d in path.iterdir() if _is_kernel_dir(d)]
    return sorted(dirs, key=lambda d: (d.stat().st_mtime, d.name))[:limit]


def is_artifact_dir(path: str | os.PathLike[str]) -> bool:
    """True for a Triton cache entry/root or a ``TRITON_KERNEL_DUMP`` directory (not an irdiff bundle)."""
    p = Path(path)
    return not (p / "manifest.json").is_file() and not (p / "variant.json").is_file() and bool(find_kernel_dirs(p))


_TYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "i1": "u1"}


def _triton_type(mlir: str) -> str:
    mlir = mlir.strip()
    m = re.fullmatch(r"!tt\.ptr<(\w+)(?:,\s*\d+)?>", mlir)
    if m:
        return "*" + _TYPES.get(m.group(1), m.group(1))
    return _TYPES.get(mlir, mlir)


def _split_top(text: str) -> tuple[list[str], int]:
    """Split ``text`` (starting after an opening parenthesis) at top-level commas up to the matching ``)``."""
    parts: list[str] = []
    depth, quoted = 0, False
    cur: list[str] = []
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted:
            if ch in "(<{[":
                depth += 1
            elif ch in ")>}]":
                if depth == 0 and ch == ")":
                    parts.append("".join(cur))
                    return [p.strip() for p in parts if p.strip()], i
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append("".join(cur))
                cur = []
                continue
        cur.append(ch)
    return [p.strip() for p in parts + ["".join(cur)] if p.strip()], len(text)


def ttir_signature(ttir: str) -> list[ArgSpec]:
    """Parameters of the public ``tt.func`` in TTIR: name (from the ``loc("name")`` hint or the SSA name), Triton
    type (``*fp16``, ``i32``, ``fp32``) and ``tt.divisibility``. Constexpr parameters are absent from TTIR."""
    m = re.search(r"tt\.func public @[\w$.]+\(", ttir)
    if not m:
        return []
    args, _ = _split_top(ttir[m.end() :])
    out: list[ArgSpec] = []
    for i, a in enumerate(args):
        am = re.match(r"%([\w$.]+)\s*:\s*(!tt\.ptr<[^>]*>|[\w.]+)", a)
        if not am:
            continue
        hint = re.search(r'loc\("([\w$.]+)"', a)
        div = re.search(r"tt\.divisibility = (\d+)", a)
        out.append(
            ArgSpec(
                name=hint.group(1) if hint else am.group(1),
                index=i,
                type=_triton_type(am.group(2)),
                divisibility=int(div.group(1)) if div else None,
                reason="read from the TTIR signature (Triton artifact: argument values and constexprs not recorded)",
            )
        )
    return out


def _ttgir_attr(ttgir: str, pattern: str) -> str | None:
    m = re.search(pattern, ttgir)
    return m.group(1) if m else None


_META_TYPES: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "target": dict,
    "num_warps": int,
    "num_stages": int,
    "num_ctas": int,
    "maxnreg": (int, type(None)),
    "enable_fp_fusion": bool,
    "shared": int,
}


def _checked_metadata(loaded: Any) -> dict[str, Any]:
    """Triton cache metadata (``<kernel>.json``) with every known field of the wrong type dropped; {} for a value
    that is not a JSON object."""
    if not isinstance(loaded, dict):
        return {}
    meta = {str(k): v for k, v in loaded.items()}
    for key, typ in _META_TYPES.items():
        if key in meta and (not isinstance(meta[key], typ) or (typ is int and isinstance(meta[key], bool))):
            del meta[key]
    t = meta.get("target")
    if isinstance(t, dict) and not (isinstance(t.get("arch"), (int, str)) and isinstance(t.get("backend", ""), str)):
        del meta["target"]
    return meta


def _variant_from_dir(kdir: Path, dest: Path, name: str) -> VariantResult:
    # Regular files only: a symlink in someone else's cache or dump directory is never followed.
    files = {
        f.suffix[1:]: f
        for f in kdir.iterdir()
        if f.is_file() and not f.is_symlink() and not f.name.startswith("__grp__")
    }
    meta: dict[str, Any] = {}
    suite = "triton-dump"
    if "json" in files:
        try:
            loaded = json.loads(files["json"].read_text(errors="replace"))
            suite = "triton-cache"
        except ValueError:
            loaded = {}
        # Triton's metadata is a JSON object; anything else (junk, another tool's file) is ignored, and so is each
        # field of the wrong type.
        meta = _checked_metadata(loaded)
    kernel = str(meta.get("name") or next(iter(files.values())).stem)
    dest.mkdir(parents=True)
    v = VariantResult(name=name, kernel=kernel, directory=str(dest))
    # Triton's cache and dump files are named by stage (``kernel.ttgir``); SASS when a dump holds it; the cubin.
    suffixes = [s.name for s in stages.text_stages() if s.origin != "source"] + [a.name for a in stages.ARTIFACTS]
    for ext, stage in ((x, x) for x in suffixes):
        if ext in files:
            shutil.copyfile(files[ext], dest / STAGE_FILES[stage])
            v.stages[stage] = STAGE_FILES[stage]
    ttgir = v.text("ttgir")
    if not isinstance(meta.get("target"), dict):
        tgt = _ttgir_attr(ttgir, r'ttg\.target = "(\w+):(\d+)"')
        m = re.search(r'ttg\.target = "(\w+):(\d+)"', ttgir)
        if tgt and m:
            meta["target"] = {"backend": m.group(1), "arch": int(m.group(2)), "warp_size": 32}
        for key, pat in (("num_warps", r'"ttg\.num-warps" = (\d+)'), ("num_ctas", r'"ttg\.num-ctas" = (\d+)')):
            val = _ttgir_attr(ttgir, pat)
            if val is not None and key not in meta:
                meta[key] = int(val)
    t = meta.get("target") or {}
    v.target = f"sm{t['arch']}" if t.get("backend") == "cuda" else str(t.get("arch", ""))
    v.options = {
        k: meta[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion") if k in meta
    }
    v.specialization = ttir_signature(v.text("ttir"))
    loc = re.search(r'^#loc\d* = loc\("([^"]+\.py)":', v.text("ttir"), re.M)
    if loc and os.path.isfile(loc.group(1)) and not os.path.islink(loc.group(1)):
        shutil.copyfile(loc.group(1), dest / STAGE_FILES["python"])
        v.stages["python"] = STAGE_FILES["python"]
        meta["source_path"] = loc.group(1)
    meta["artifact"] = {"kind": suite, "path": str(kdir)}
    v.metadata = meta
    (dest / "variant.json").write_text(json.dumps(v.to_json(), indent=1, default=str))
    return v


def load_artifacts(path: str | os.PathLike[str], workdir: str | os.PathLike[str] | None = None) -> Bundle:
    """Convert a Triton cache entry/root or a ``TRITON_KERNEL_DUMP`` directory into a bundle.

    :param workdir: where to write the bundle; default a temporary directory removed when the process exits.
    :raises BundleError: ``path`` holds no kernel directory (no ``.ttir``/``.ttgir``/``.ptx`` files).
    :returns: a bundle whose ``suite`` is ``triton-cache`` or ``triton-dump``, one variant per kernel (named after
        the kernel, ``-2``, ``-3`` … for further compiles of the same kernel), oldest first.
    """
    src = Path(path)
    kdirs = find_kernel_dirs(src)
    if not kdirs:
        raise BundleError(
            f"{src}: no Triton kernels here (expected a Triton cache entry or root, a TRITON_KERNEL_DUMP directory, "
            "an irdiff bundle or capture)"
        )
    if workdir is None:
        root = Path(tempfile.mkdtemp(prefix="irdiff-artifacts-"))
        atexit.register(shutil.rmtree, root, True)
    else:
        root = Path(workdir)
        root.mkdir(parents=True, exist_ok=True)
    variants: dict[str, VariantResult] = {}
    for kdir in kdirs:
        files = [f for f in kdir.iterdir() if f.suffix in _IR_SUFFIXES]
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", files[0].stem) if files else kdir.name
        name, i = base, 1
        while name in variants:
            i += 1
            name = f"{base}-{i}"
        variants[name] = _variant_from_dir(kdir, root / name, name)
    kinds = {str(v.metadata.get("artifact", {}).get("kind")) for v in variants.values()}
    targets = sorted({v.target for v in variants.values() if v.target})
    versions = sorted(
        {str(v.metadata["triton_version"]) for v in variants.values() if v.metadata.get("triton_version")}
    )
    bundle = Bundle(
        suite=kinds.pop() if len(kinds) == 1 else "triton-artifacts",
        target=",".join(targets),
        triton_version=",".join(versions),
        command=[],
        variants=variants,
        schema=SCHEMA,
        directory=str(root),
    )
    bundle.save()
    return bundle
