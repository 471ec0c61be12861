"""The IR stages irdiff knows, declared once: every consumer (bundle, compile worker, capture, normalizers, lexers,
location maps, diagnostics, terminal/HTML/Markdown renderers) reads this table instead of listing stage names.

A stage is plain data (:class:`Stage`). :data:`STAGES` holds them in pipeline order; :func:`declare` adds one (a
newer Triton's stage, or a throwaway stage in a test) and every consumer picks it up, because they all read the
table when they run (:func:`text_stages`, :func:`get`, :func:`names`), never a copy taken at import.

Example::

    declare(Stage("ttgir_late", file="ttgir-late.mlir", title="TTGIR (late)", dialect="mlir", lexer="ttgir",
                  locations="mlir", origin="triton"))

Where the facts come from: Triton's ``BaseBackend.add_stages`` (``python/triton/backends/compiler.py``) fills
``CompiledKernel.asm`` with ``ttir``, ``ttgir``, ``llir``, ``ptx`` and ``cubin`` (NVIDIA backend,
``third_party/nvidia/backend/compiler.py``); ``sass`` is disassembled from the cubin (``AsmDict.__missing__``,
``triton/tools/disasm.py``); ``python`` is the file that defines the kernel.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, overload

__all__ = [
    "ARTIFACTS",
    "STAGES",
    "Artifact",
    "Dialect",
    "Origin",
    "Stage",
    "declare",
    "declared",
    "get",
    "names",
    "text_stages",
    "undeclare",
]

Dialect = Literal["mlir", "llir", "ptx", "sass", "text"]
Origin = Literal["source", "triton", "derived"]


@dataclass(frozen=True)
class Stage:
    """One text stage of a compiled kernel.

    :ivar name: the stage name used everywhere (``--stage``, bundle records, findings' evidence).
    :ivar file: file name inside a bundle's variant directory.
    :ivar title: human title (terminal, HTML and Markdown headings).
    :ivar dialect: which normalizer reads it (:mod:`irdiff.normalize`): ``mlir``, ``llir``, ``ptx``, ``sass``
        or ``text`` (lines kept).
    :ivar lexer: pygments alias of its lexer (:mod:`irdiff.lexers`; ``python`` is pygments' own), or None.
    :ivar locations: how its raw lines map to Python lines (:mod:`irdiff.normalize.locations`): ``python``,
        ``mlir``, ``llir``, ``ptx``, ``sass``, or None (no mapping).
    :ivar origin: ``source`` (the kernel's Python file), ``triton`` (a key of ``CompiledKernel.asm`` and a suffix of
        Triton's cache files; the compile worker and the capture hooks save it) or ``derived`` (made by irdiff from
        another artifact, e.g. SASS from the cubin).
    :ivar counted: its key operation counts (:data:`irdiff.diagnose.counts.KEY_COUNTS`) appear in the summary and
        in the facts.
    :ivar compared: part of "identical after normalization" (diagnostics).
    :ivar shown_by_default: the terminal prints its hunks without ``--stage`` (the others get one summary line).
    :ivar report_rank: order of stages in the Markdown report's "where it differs" (lower first).
    """

    name: str
    file: str
    title: str
    dialect: Dialect = "text"
    lexer: str | None = None
    locations: str | None = None
    origin: Origin = "triton"
    counted: bool = False
    compared: bool = True
    shown_by_default: bool = False
    report_rank: int = 9


@dataclass(frozen=True)
class Artifact:
    """A binary file of a compiled kernel kept beside the stages (not diffed as text)."""

    name: str
    file: str


# Pipeline order. "python" is the kernel's source; stage 0 (the specialization table) is not a text stage.
_DECLARED: list[Stage] = [
    Stage(
        "python",
        "kernel.py",
        "Python",
        lexer="python",
        locations="python",
        origin="source",
        compared=False,
        shown_by_default=True,
        report_rank=5,
    ),
    Stage("ttir", "ttir.mlir", "TTIR", "mlir", "ttir", "mlir", counted=True, shown_by_default=True, report_rank=1),
    Stage("ttgir", "ttgir.mlir", "TTGIR", "mlir", "ttgir", "mlir", counted=True, shown_by_default=True, report_rank=0),
    Stage("llir", "llir.ll", "LLVM IR", "llir", "tllir", "llir", counted=True, report_rank=4),
    Stage("ptx", "ptx.ptx", "PTX", "ptx", "tptx", "ptx", counted=True, report_rank=2),
    Stage("sass", "sass.sass", "SASS", "sass", "cuda-sass", "sass", origin="derived", counted=True, report_rank=3),
]

# Binary artifacts saved beside the stages (the cubin SASS is disassembled from).
ARTIFACTS: tuple[Artifact, ...] = (Artifact("cubin", "kernel.cubin"),)


def text_stages() -> tuple[Stage, ...]:
    """Every declared stage, in pipeline order."""
    return tuple(_DECLARED)


def names() -> tuple[str, ...]:
    """Names of every declared stage, in pipeline order."""
    return tuple(s.name for s in _DECLARED)


def get(name: str) -> Stage | None:
    """The stage called ``name``, or None."""
    return next((s for s in _DECLARED if s.name == name), None)


def declare(stage: Stage, *, after: str | None = None) -> Stage:
    """Add ``stage`` (after the stage named ``after``, else last); every consumer sees it from now on.

    :raises ValueError: a stage of that name or file already exists, or ``after`` names no stage.
    """
    if get(stage.name) is not None or any(s.file == stage.file for s in _DECLARED):
        raise ValueError(f"stage {stage.name!r} (file {stage.file!r}) is already declared")
    if after is None:
        _DECLARED.append(stage)
    else:
        idx = next((i for i, s in enumerate(_DECLARED) if s.name == after), None)
        if idx is None:
            raise ValueError(f"no stage named {after!r}")
        _DECLARED.insert(idx + 1, stage)
    return stage


def undeclare(name: str) -> None:
    """Remove the stage called ``name`` (tests)."""
    _DECLARED[:] = [s for s in _DECLARED if s.name != name]


@contextmanager
def declared(stage: Stage, *, after: str | None = None) -> Iterator[Stage]:
    """``with declared(Stage(...)):`` the stage exists inside the block only (tests)."""
    declare(stage, after=after)
    try:
        yield stage
    finally:
        undeclare(stage.name)


class _Names(Sequence[str]):
    """A live, read-only view of the declared stage names (pipeline order)."""

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        return names()[i]

    def __len__(self) -> int:
        return len(_DECLARED)

    def __repr__(self) -> str:
        return repr(names())


class _Files(Mapping[str, str]):
    """A live, read-only view ``stage or artifact name → file name`` (stages first, then artifacts)."""

    def _all(self) -> dict[str, str]:
        return {**{s.name: s.file for s in _DECLARED}, **{a.name: a.file for a in ARTIFACTS}}

    def __getitem__(self, key: str) -> str:
        return self._all()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


# Live views for code that wants a sequence of names or a name → file mapping (``irdiff.bundle`` re-exports them).
STAGES: Sequence[str] = _Names()
FILES: Mapping[str, str] = _Files()
