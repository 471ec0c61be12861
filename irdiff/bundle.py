"""The on-disk bundle: everything one comparison produced, readable without Triton.

Layout of a bundle directory::

    DIR/manifest.json            versioned manifest (schema, suite, target, versions, command line, variants)
    DIR/<variant>/variant.json   VariantResult without the stage texts
    DIR/<variant>/<stage file>   one text file per stage: kernel.py, ttir.mlir, ttgir.mlir, llir.ll, ptx.ptx,
                                 sass.sass, kernel.cubin; logs: llvm-debug.log, ptxas.log; passes/NNN-<pass>.mlir

Everything after the compile driver (differ, diagnostics, runner, reports) reads bundles only, so a bundle made on
one machine can be diffed and reported on another. ``SCHEMA`` changes when the layout changes incompatibly; readers
reject other major versions with :class:`BundleError`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from irdiff import stages

SCHEMA = "irdiff.bundle/1"

# Pipeline order of the text stages and their file names, declared once in irdiff.stages (live views: a stage
# declared later appears here too); "python" is the kernel's source (stage 0 is the specialization table).
STAGES: Sequence[str] = stages.STAGES
STAGE_FILES: Mapping[str, str] = stages.FILES
LOG_FILES: dict[str, str] = {
    "llvm_debug": "llvm-debug.log",  # TRITON_ENABLE_LLVM_DEBUG output: coalescing and pipelining reasoning
    "ptxas": "ptxas.log",  # ptxas -v report
    "compile": "compile.log",  # anything else the compiler printed
}


class BundleError(Exception):
    """A bundle is missing, unreadable, or of an unsupported schema version (one-line message)."""


@dataclass
class ArgSpec:
    """Stage 0: how the JIT specialized one kernel parameter (from the installed Triton's own binder).

    :ivar type: signature type the JIT chose (``*fp16``, ``i32``, ``i64``, ``fp32``, ``u1``) or ``constexpr``.
    :ivar divisibility: the ``tt.divisibility`` attribute (16) or None.
    :ivar constexpr: ``repr`` of the constant value when the parameter became a constexpr, else None.
    :ivar reason: plain sentence: why this specialization (value, alignment, annotation, do_not_specialize).
    :ivar value: description of the example value (``1``, ``fp16[1024, 1024] strides (1024, 1) align 16``).
    :ivar annotation: the Python annotation as written (``int``, ``tl.constexpr``) or None.
    """

    name: str
    index: int
    type: str
    divisibility: int | None = None
    constexpr: str | None = None
    reason: str = ""
    value: str = ""
    annotation: str | None = None
    is_constexpr_param: bool = False
    do_not_specialize: bool = False
    do_not_specialize_on_alignment: bool = False

    @property
    def kind(self) -> str:
        """``constexpr``, ``pointer`` or ``scalar``."""
        if self.type == "constexpr":
            return "constexpr"
        return "pointer" if self.type.startswith("*") else "scalar"

    def summary(self) -> str:
        """Compact cell text, e.g. ``i32 div16``, ``constexpr = 1``, ``*fp16 div16``."""
        if self.type == "constexpr":
            return f"constexpr = {self.constexpr}"
        return self.type + (f" div{self.divisibility}" if self.divisibility else "")


@dataclass
class Resources:
    """Per-kernel resources. Registers/stack/spills from ptxas' own ``-v`` report (``ptxas info : Used N
    registers``); shared memory in bytes from Triton's metadata (``metadata.shared``, dynamic smem the launcher
    requests); ``static_shared`` from ``cuobjdump --dump-resource-usage``."""

    registers: int | None = None
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    stack_bytes: int | None = None
    shared_bytes: int | None = None
    static_shared_bytes: int | None = None
    barriers: int | None = None
    ptxas_version: str = ""


@dataclass
class VariantResult:
    """One compiled variant. ``stages`` maps stage name → file name inside the variant directory.

    ``error`` holds the compiler's message when the variant failed to compile; the other fields are then partial.
    """

    name: str
    kernel: str = ""
    target: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    specialization: list[ArgSpec] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    resources: Resources = field(default_factory=Resources)
    stages: dict[str, str] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    passes: list[str] = field(default_factory=list)
    compile_seconds: float | None = None
    cache_hit: bool = False
    error: str | None = None
    timings: dict[str, Any] = field(default_factory=dict)
    directory: str = ""

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("directory")
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], directory: str = "") -> VariantResult:
        known = {f.name for f in fields(cls)}
        d = {k: v for k, v in d.items() if k in known}
        d["specialization"] = [ArgSpec(**a) for a in d.get("specialization", [])]
        d["resources"] = Resources(**d.get("resources", {}))
        d["directory"] = directory
        return cls(**d)

    def path(self, stage: str) -> Path | None:
        name = self.stages.get(stage) or self.logs.get(stage)
        return Path(self.directory) / name if name else None

    def text(self, stage: str) -> str:
        """Text of a stage or log (``""`` when it was not produced)."""
        p = self.path(stage)
        if p is None or not p.is_file():
            return ""
        return p.read_text(errors="replace")


@dataclass
class Bundle:
    """A comparison on disk: the manifest plus its variants (see the module docstring for the layout)."""

    suite: str
    target: str
    triton_version: str = ""
    ptxas_version: str = ""
    command: list[str] = field(default_factory=list)
    created: str = ""
    shape: dict[str, int] = field(default_factory=dict)
    variants: dict[str, VariantResult] = field(default_factory=dict)
    pair: list[str] = field(default_factory=list)
    runs: dict[str, Any] = field(default_factory=dict)
    schema: str = SCHEMA
    directory: str = ""

    def compiled_variant(self, name: str) -> VariantResult:
        """The variant called ``name``, compiled without error.

        :raises BundleError: the bundle has no such variant (the message lists those it has), or it failed to
            compile (the message quotes the compiler's first line).
        """
        v = self.variants.get(name)
        if v is None:
            have = ", ".join(self.variants) or "none"
            where = f" {self.directory}" if self.directory else ""
            raise BundleError(f"variant {name!r} is not in the bundle{where} (it has: {have})")
        if v.error:
            first = v.error.strip().splitlines()
            raise BundleError(f"variant {name!r} failed to compile: {first[0] if first else v.error}")
        return v

    def manifest(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "suite": self.suite,
            "target": self.target,
            "triton_version": self.triton_version,
            "ptxas_version": self.ptxas_version,
            "command": self.command,
            "created": self.created,
            "shape": self.shape,
            "pair": self.pair,
            "variants": list(self.variants),
            "runs": self.runs,
        }

    def save(self) -> None:
        """Write ``manifest.json`` and every ``variant.json`` (stage files are written by the compile driver)."""
        root = Path(self.directory)
        root.mkdir(parents=True, exist_ok=True)
        for v in self.variants.values():
            vdir = Path(v.directory or root / v.name)
            vdir.mkdir(parents=True, exist_ok=True)
            _atomic_write(vdir / "variant.json", json.dumps(v.to_json(), indent=1, default=str))
        _atomic_write(root / "manifest.json", json.dumps(self.manifest(), indent=1, default=str))


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def load_variant_dir(path: str | os.PathLike[str]) -> VariantResult:
    """Read one saved variant directory (``DIR/<variant>``).

    :raises BundleError: no ``variant.json`` there.
    """
    p = Path(path)
    vj = p / "variant.json"
    if not vj.is_file():
        raise BundleError(f"{p} is not an irdiff variant directory (no variant.json)")
    try:
        return VariantResult.from_json(json.loads(vj.read_text()), directory=str(p))
    except (ValueError, TypeError) as e:
        raise BundleError(f"{vj}: unreadable variant record: {e}") from None


def load_bundle(path: str | os.PathLike[str]) -> Bundle:
    """Read a bundle directory.

    :raises BundleError: missing directory or manifest, or a schema other than ``irdiff.bundle/1``.
    """
    root = Path(path)
    mf = root / "manifest.json"
    if not mf.is_file():
        raise BundleError(f"{root} is not an irdiff bundle (no manifest.json)")
    try:
        m = json.loads(mf.read_text())
    except ValueError as e:
        raise BundleError(f"{mf}: not valid JSON: {e}") from None
    schema = m.get("schema", "")
    if schema.split("/")[0] != SCHEMA.split("/")[0] or schema != SCHEMA:
        raise BundleError(f"{root}: bundle schema {schema or '(none)'!r} is not supported (this irdiff reads {SCHEMA})")
    variants = {name: load_variant_dir(root / name) for name in m.get("variants", [])}
    return Bundle(
        suite=m.get("suite", ""),
        target=m.get("target", ""),
        triton_version=m.get("triton_version", ""),
        ptxas_version=m.get("ptxas_version", ""),
        command=m.get("command", []),
        created=m.get("created", ""),
        shape=m.get("shape", {}),
        variants=variants,
        pair=m.get("pair", []),
        runs=m.get("runs", {}),
        schema=schema,
        directory=str(root),
    )


def copy_variant(src: VariantResult, dest_dir: Path) -> VariantResult:
    """Copy a saved variant directory into ``dest_dir`` (used to assemble bundles from cached results).

    The copy is made beside ``dest_dir`` and renamed into place, so a concurrent reader or writer of the same
    bundle never sees a half-copied variant.
    """
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{dest_dir.name}-", dir=dest_dir.parent))
    shutil.copytree(src.directory, tmp, dirs_exist_ok=True)
    for _ in range(3):
        try:
            os.replace(tmp, dest_dir)
            break
        except OSError:  # dest_dir exists (an older copy, or another process just wrote it)
            shutil.rmtree(dest_dir, ignore_errors=True)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return load_variant_dir(dest_dir)
