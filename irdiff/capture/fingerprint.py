"""A kernel's code fingerprint: one hash that is equal for two kernels exactly when their code is the same once
what moves with the rest of the program is left out, so ``irdiff diff`` of two captures recognizes an unchanged
kernel by comparing two strings, without reading, normalizing or aligning any stage.

What goes in (each kernel's own, in this order):

* stage 0: each parameter's name, specialization type, ``tt.divisibility`` and constexpr value; the compile
  options (``num_warps``, ``num_stages``, …) and the ptxas version (equal PTX and ptxas give equal SASS);
* the kernel's source lines and those of the ``@jit`` functions it calls (``kernel_lines``/``callee_lines``
  recorded by :mod:`irdiff.capture.hooks`; the whole ``kernel.py`` when they are not), right-stripped;
* TTIR and TTGIR without their ``#loc`` definitions (MLIR debug locations: line numbers of the source file), LLIR
  without its metadata lines (``!…``, the module header), PTX without ``.loc``/``.file`` lines, comments, the
  header (``.version``/``.target``/``.address_size``) and the DWARF sections.

The kernel's own name is replaced by ``KERNEL`` everywhere (the same kernel captured under a numbered name).
A change outside the kernels (a list elsewhere in the file, lines inserted above) moves only what is left out,
so the fingerprints stay equal; any change of the kernel's code changes at least one part.

:func:`fingerprint` is computed in the capture's after-run step (:mod:`irdiff.capture.finalize`) and stored in
``variant.json`` (``metadata["fingerprint"]``, prefixed with :data:`VERSION`); :func:`stored_or_computed` reads
it back, or computes it for kernels recorded without one (older captures, Triton cache and dump directories).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

__all__ = ["VERSION", "fingerprint", "kernel_source_lines", "stored_or_computed"]

VERSION = "fp1"  # bump when what goes into the hash changes: stored fingerprints of another version are ignored

_PTX_NOISE = re.compile(r"^\s*(\.loc|\.file|//|\.version|\.target|\.address_size)|^\s*$")


def kernel_source_lines(v: Any) -> list[str]:
    """The kernel's own source lines (``kernel_lines`` and ``callee_lines`` of ``kernel.py``; the whole file when
    they are not recorded), right-stripped, with its name replaced by ``KERNEL``."""
    lines = v.text("python").splitlines()
    ranges = [v.metadata.get("kernel_lines"), *(v.metadata.get("callee_lines") or [])]
    picked = [
        lines[i]
        for r in ranges
        if isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) for x in r)
        for i in range(max(0, int(r[0]) - 1), min(len(lines), int(r[1])))
    ]
    out = picked or lines
    name = v.kernel or ""
    return [ln.rstrip().replace(name, "KERNEL") if name else ln.rstrip() for ln in out]


def stage_lines(stage: str, text: str, name: str) -> list[str]:
    """``text`` of ``stage`` (``ttir``, ``ttgir``, ``llir``, ``ptx``) without its debug information and header, the
    kernel name replaced (see the module docstring)."""
    if stage in ("ttir", "ttgir"):
        lines = [ln for ln in text.splitlines() if not ln.startswith("#loc")]
    elif stage == "llir":
        lines = [ln for ln in text.splitlines() if not ln.startswith(("!", "; ModuleID", "source_filename"))]
    else:  # ptx
        cut = text.split(".section\t.debug", 1)[0].split(".section .debug", 1)[0]
        lines = [ln for ln in cut.splitlines() if not _PTX_NOISE.match(ln)]
    return [ln.replace(name, "KERNEL") for ln in lines] if name else lines


def fingerprint(v: Any) -> str | None:
    """``fp1:<sha256 hex>`` of the kernel ``v`` (a :class:`~irdiff.bundle.VariantResult`), or None when it has no
    PTX (a failed or partial compile: such kernels are always compared in full)."""
    name = v.kernel or ""
    ptx = v.text("ptx")
    if not ptx:
        return None
    h = hashlib.sha256()

    def part(label: str, lines: list[str]) -> None:
        h.update(f"\0{label}\0{len(lines)}\0".encode())
        h.update("\n".join(lines).encode("utf-8", "surrogatepass"))

    spec = [[s.name, s.type, s.divisibility, s.constexpr] for s in v.specialization]
    part("spec", [json.dumps(spec, sort_keys=True, default=str)])
    part("options", [json.dumps(v.options, sort_keys=True, default=str), str(v.resources.ptxas_version or "")])
    part("python", kernel_source_lines(v))
    for stage in ("ttir", "ttgir", "llir"):
        part(stage, stage_lines(stage, v.text(stage), name))
    part("ptx", stage_lines("ptx", ptx, name))
    return f"{VERSION}:{h.hexdigest()}"


def stored_or_computed(v: Any) -> str | None:
    """The fingerprint the capture stored for ``v`` (``metadata["fingerprint"]`` of this :data:`VERSION`), else
    :func:`fingerprint` computed now."""
    stored = v.metadata.get("fingerprint")
    if isinstance(stored, str) and stored.startswith(VERSION + ":") and len(stored) == len(VERSION) + 65:
        return stored
    return fingerprint(v)
