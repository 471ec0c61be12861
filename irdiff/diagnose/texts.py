"""Stage texts of a saved variant, read once per file version.

The fact extractors, mechanism facts, provenance and the root engine all read the same stage files (the LLIR and PTX
of a large matmul are thousands of lines); :func:`stage_text` reads each file once per version (path, size,
modification time) instead of once per reader.
"""

from __future__ import annotations

from functools import lru_cache

from irdiff.bundle import VariantResult

__all__ = ["clear", "stage_text"]


@lru_cache(maxsize=64)
def _read(path: str, size: int, mtime_ns: int) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def stage_text(v: VariantResult, stage: str) -> str:
    """``v.text(stage)``, read once per file version; ``""`` when the stage was not produced or cannot be read.

    :raises irdiff.bundle.BundleError: the record names a file outside the variant directory (as ``v.path``).
    """
    p = v.path(stage)
    if p is None:
        return ""
    try:
        st = p.stat()
    except OSError:
        return ""
    if not p.is_file():
        return ""
    return _read(str(p), st.st_size, st.st_mtime_ns)


def clear() -> None:
    """Forget the texts read (benchmarks time cold reads with it)."""
    _read.cache_clear()
