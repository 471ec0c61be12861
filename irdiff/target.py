"""GPU targets, parsed in one place: :func:`parse_target` turns what a user, a bundle or Triton writes (``sm80``,
``sm_90a``, ``SM90``, ``90``, ``100``, ``cuda:90``, ``gfx942``) into a :class:`Target`, and every bad string gets the
same one-line error (:class:`TargetError`, a ``ValueError``).

Where the facts come from: Triton's ``GPUTarget(backend, arch, warp_size)`` (``python/triton/backends/compiler.py``;
``arch`` is the compute capability as an int for CUDA, ``"gfx942"`` for HIP) and the NVIDIA backend's capability
checks (``third_party/nvidia/backend/compiler.py``: wgmma on 9.0, TMA from 9.0, ``cp.async`` from 8.0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["SUPPORTED", "SUPPORTED_NAMES", "Target", "TargetError", "parse_target"]

# CUDA compute capabilities irdiff compiles for (the compile driver's stand-in reports one of these to Triton).
SUPPORTED: tuple[int, ...] = (80, 86, 89, 90, 100, 120)
SUPPORTED_NAMES: tuple[str, ...] = tuple(f"sm{a}" for a in SUPPORTED)

_FAMILIES = {8: "ampere", 9: "hopper", 10: "blackwell", 12: "blackwell-consumer"}
_AMD_FAMILIES = {"gfx90a": "cdna2", "gfx940": "cdna3", "gfx941": "cdna3", "gfx942": "cdna3", "gfx950": "cdna4"}

# sm80, sm_90a, SM90, 90, 100, cuda:90, cuda:90a (case and underscores ignored)
_CUDA = re.compile(r"^(?:cuda:|sm_?)?(\d{2,3})(a?)$")
# gfx942, hip:gfx942
_AMD = re.compile(r"^(?:hip:)?(gfx[0-9a-f]+)$")


class TargetError(ValueError):
    """A target string irdiff cannot use; the message is one line and lists the supported targets."""


@dataclass(frozen=True)
class Target:
    """One GPU target.

    :ivar backend: ``cuda`` or ``hip`` (Triton's ``GPUTarget.backend``).
    :ivar arch: compute capability as an int for CUDA (``90``); the ``gfx`` name for HIP (``"gfx942"``).
    :ivar arch_specific: the ``a`` of ``sm_90a`` was given (architecture-specific features; irdiff compiles the
        same either way, as Triton picks ``sm_90a`` itself for wgmma/TMA).
    """

    backend: Literal["cuda", "hip"]
    arch: int | str
    arch_specific: bool = False

    @property
    def name(self) -> str:
        """irdiff's name: ``sm90`` (bundles, cache keys, ``--target``), ``gfx942`` for AMD."""
        return f"sm{self.arch}" if self.backend == "cuda" else str(self.arch)

    @property
    def capability(self) -> int:
        """CUDA compute capability as an int (``90``); 0 for other backends."""
        return self.arch if isinstance(self.arch, int) else 0

    @property
    def family(self) -> str:
        """``ampere`` (8.x), ``hopper`` (9.0), ``blackwell`` (10.x), ``blackwell-consumer`` (12.x); AMD: ``cdna3``."""
        if self.backend == "hip":
            return _AMD_FAMILIES.get(str(self.arch), "amd")
        return _FAMILIES.get(self.capability // 10, "unknown")

    @property
    def warp_size(self) -> int:
        """Threads per warp (wavefront): 32 on NVIDIA, 64 on CDNA."""
        return 32 if self.backend == "cuda" else 64

    @property
    def supported(self) -> bool:
        """irdiff can compile for it (:data:`SUPPORTED`)."""
        return self.backend == "cuda" and self.capability in SUPPORTED

    @property
    def has_cp_async(self) -> bool:
        """``cp.async`` global→shared copies (sm80+): what Triton's pipeliner uses for loads."""
        return self.backend == "cuda" and self.capability >= 80

    @property
    def has_tma(self) -> bool:
        """Tensor Memory Accelerator copies (sm90+)."""
        return self.backend == "cuda" and self.capability >= 90

    @property
    def has_wgmma(self) -> bool:
        """Warpgroup MMA (``wgmma``, MMA v3): sm90 only."""
        return self.backend == "cuda" and self.capability == 90

    def to_triton(self) -> Any:
        """Triton's ``GPUTarget`` for it (imports Triton)."""
        from triton.backends.compiler import GPUTarget

        return GPUTarget(self.backend, self.arch, self.warp_size)

    @classmethod
    def from_triton(cls, target: Any) -> Target | None:
        """From ``GPUTarget("cuda", 90, 32)`` or its dict form; None when it is neither."""
        if isinstance(target, dict):
            backend, arch = target.get("backend"), target.get("arch")
        else:
            backend, arch = getattr(target, "backend", None), getattr(target, "arch", None)
        if backend == "cuda" and isinstance(arch, int):
            return cls("cuda", arch)
        if backend == "hip" and isinstance(arch, str) and arch:
            return cls("hip", arch)
        return None

    def __str__(self) -> str:
        return self.name


def parse_target(text: str, *, supported_only: bool = True) -> Target:
    """Parse a target string: ``sm80``, ``sm_90a``, ``SM90``, ``90``, ``100``, ``cuda:90``, ``gfx942``.

    :param supported_only: refuse targets irdiff cannot compile for (every CUDA capability outside
        :data:`SUPPORTED`, every AMD target); False parses any well-formed target (reading bundles).
    :raises TargetError: a malformed or (with ``supported_only``) unsupported target; one line listing the
        supported ones.
    """
    key = str(text).strip().lower()
    m = _CUDA.match(key.replace("_", "")) if key else None
    if m:
        t = Target("cuda", int(m.group(1)), bool(m.group(2)))
        if t.supported or not supported_only:
            return t
    else:
        am = _AMD.match(key) if key else None
        if am:
            t = Target("hip", am.group(1))
            if not supported_only:
                return t
            raise TargetError(
                f"unsupported target {text!r}: AMD ({t.family}) is not supported yet "
                f"(supported: {', '.join(SUPPORTED_NAMES)})"
            )
    raise TargetError(f"unsupported target {text!r} (supported: {', '.join(SUPPORTED_NAMES)})")
