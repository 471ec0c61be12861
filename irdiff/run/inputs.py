"""Real torch arguments from a suite's argument description (:class:`irdiff.suite.Tensor`, ints, floats …).

For each :class:`~irdiff.suite.Tensor`:

- memory: one flat allocation large enough for the strided extent plus an offset, viewed with ``as_strided`` so the
  strides are exactly the described ones and the base pointer has exactly the described alignment: ``align >= 16``
  gives a pointer that is a multiple of 16 bytes (the JIT then specializes it ``tt.divisibility = 16``); ``align < 16``
  (8 models a misaligned view) gives ``data_ptr() % 16 == align``, as the compile driver's stand-in tensor does.
- values: seeded per parameter name, drawn as a contiguous tensor of the logical shape and then copied into the
  strided view, so two variants with the same parameter name, shape and dtype see the same values whatever their
  layout. ``randn``/``rand``/``ones``/``arange`` floats; integers uniform in [-8, 8) ([0, 16) unsigned); booleans
  fair coin flips. No input is all zeros (a zero input hides wrong indexing).
- outputs (``output=True``): set before each correctness launch (:func:`poison_outputs`) to the tensor's ``init``:
  ``"nan"`` (the default) poisons floats with NaN, integers with ``iinfo.max // 2`` (adding a count to it does not
  overflow) and booleans with ``True``, so elements a kernel never writes are caught by the comparison;
  ``"zeros"``, ``"ones"``, a number or a function give the starting value an accumulating kernel needs. The
  initial values are kept (:attr:`Inputs.initial`) so the reference sees the output as the kernel found it.

torch is imported lazily; this module imports without it.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from irdiff.suite import DTYPES, Tensor

__all__ = ["Inputs", "build_inputs", "clone_outputs", "poison_outputs", "torch_dtype"]

_TORCH_DTYPES = {name: d.torch for name, d in DTYPES.items()}  # declared once in irdiff.suite


def torch_dtype(name: str) -> Any:
    """torch dtype for a Triton dtype name (``fp16`` → ``torch.float16``).

    :raises ValueError: a dtype this torch build lacks (e.g. fp8 on an old torch).
    """
    import torch

    attr = _TORCH_DTYPES.get(name)
    dt = getattr(torch, attr, None) if attr else None
    if dt is None:
        raise ValueError(f"dtype {name!r} has no torch equivalent in torch {torch.__version__}")
    return dt


@dataclass
class Inputs:
    """Arguments for one launch at one shape.

    :ivar args: parameter name → torch tensor (strided view) or Python scalar, ready for ``kernel[grid](**args)``.
    :ivar specs: parameter name → the :class:`Tensor` description, for tensor parameters.
    :ivar outputs: names of the output tensor parameters, in argument order.
    :ivar storage: parameter name → the flat allocation behind the view (keeps offsets/gaps alive).
    :ivar initial: output name → copy of its starting values (only outputs whose ``init`` is not ``"nan"``).
    """

    args: dict[str, Any]
    specs: dict[str, Tensor] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    storage: dict[str, Any] = field(default_factory=dict)
    device: str = "cpu"
    initial: dict[str, Any] = field(default_factory=dict)

    def reference_args(self) -> dict[str, Any]:
        """The arguments as the kernel found them: outputs hold their initial values; an output that starts as NaN
        (the kernel must not read it) is passed as zeros of its shape."""
        out = {}
        for k, v in self.args.items():
            if k in self.initial:
                out[k] = self.initial[k]
            elif k in self.outputs:
                out[k] = v.new_zeros(v.shape)
            else:
                out[k] = v
        return out


def _param_seed(seed: int, name: str) -> int:
    return (seed * 1_000_003 + zlib.crc32(name.encode())) & 0x7FFFFFFF


def _extent(spec: Tensor) -> int:
    """Elements spanned by the strided view (``1 + sum((size - 1) * stride)``; 0 for an empty tensor)."""
    if any(s == 0 for s in spec.shape):
        return 0
    return 1 + sum((size - 1) * abs(spec.stride(d)) for d, size in enumerate(spec.shape))


def _offset_elems(spec: Tensor) -> int:
    """Element offset into a 256-byte-aligned allocation that gives the base pointer the described alignment."""
    off_bytes = spec.align if spec.align < 16 else 0
    if off_bytes % spec.element_bytes:
        raise ValueError(
            f"alignment {spec.align} bytes is not a multiple of the {spec.dtype} element size ({spec.element_bytes} B)"
        )
    return off_bytes // spec.element_bytes


def _values(spec: Tensor, seed: int, device: str) -> Any:
    """A contiguous tensor of the logical shape holding the seeded initial values."""
    import torch

    dt = torch_dtype(spec.dtype)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    shape = tuple(spec.shape)
    n = 1
    for s in shape:
        n *= s
    init = spec.start
    if init == "ones":
        return torch.ones(shape, dtype=dt, device=device)
    if init == "zeros":
        return torch.zeros(shape, dtype=dt, device=device)
    if init == "arange":
        return torch.arange(n, device=device).reshape(shape).to(dt)
    if dt == torch.bool:
        return torch.rand(shape, generator=gen, device=device) < 0.5
    if dt.is_floating_point:
        if init == "rand":
            x = torch.rand(shape, generator=gen, device=device, dtype=torch.float32)
        elif init == "randn":
            x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
        else:
            raise ValueError(f"unknown init {init!r} for an input (randn, rand, ones, zeros, arange)")
        return x.to(dt)
    low, high = (0, 16) if spec.dtype.startswith("u") else (-8, 8)
    x = torch.randint(low, high, shape, generator=gen, device=device, dtype=torch.int64)
    if n and not bool(x.any()):
        x.view(-1)[0] = 1
    return x.to(dt)


def build_inputs(values: Mapping[str, Any], device: str = "cuda", seed: int = 0) -> Inputs:
    """Allocate and fill the arguments a suite's ``args(shape)`` describes.

    :param values: ``{param: Tensor | int | float | bool | None}`` as returned by ``Suite.args(shape)``.
    :param device: torch device (``"cuda"``, ``"cpu"`` for Triton's interpreter).
    :param seed: base seed; each tensor's values depend only on it, the parameter name, shape, dtype and init.
    :raises ValueError: an alignment that is not a multiple of the element size, an unknown init, a dtype torch
        lacks.
    """
    import torch

    out = Inputs(args={}, device=device)
    for name, v in values.items():
        if not isinstance(v, Tensor):
            out.args[name] = v
            continue
        dt = torch_dtype(v.dtype)
        off = _offset_elems(v)
        flat = torch.empty(_extent(v) + off, dtype=dt, device=device)
        strides = tuple(v.stride(d) for d in range(len(v.shape)))
        view = flat.as_strided(tuple(v.shape), strides, off)
        out.specs[name] = v
        out.storage[name] = flat
        out.args[name] = view
        if v.output:
            out.outputs.append(name)
            _start(out, name)
        else:
            flat.zero_()
            view.copy_(_values(v, _param_seed(seed, name), device))
    return out


def _poison(t: Any) -> None:
    import torch

    if t.dtype.is_floating_point:
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).max // 2)


def _start(inputs: Inputs, name: str) -> None:
    """Set output ``name`` to its starting value (poison the whole allocation first, so gaps stay poisoned)."""
    flat, view, spec = inputs.storage[name], inputs.args[name], inputs.specs[name]
    _poison(flat)
    init = spec.start
    if isinstance(init, str) and init == "nan":
        inputs.initial.pop(name, None)
        return
    if init == "zeros":
        view.fill_(0)
    elif init == "ones":
        view.fill_(1)
    elif isinstance(init, (int, float)):
        view.fill_(init)
    elif callable(init):
        try:
            got = init(view)
        except Exception as e:  # noqa: BLE001 - user code
            raise ValueError(f"init function of output {name!r} failed: {type(e).__name__}: {e}") from None
        if got is not None:
            view.copy_(got)
    inputs.initial[name] = view.clone()


def poison_outputs(inputs: Inputs) -> None:
    """Set every output to its starting value (``init``; NaN poison by default) before a correctness launch."""
    for name in inputs.outputs:
        _start(inputs, name)


def clone_outputs(inputs: Inputs) -> dict[str, Any]:
    """Copies of the output views (taken right after a correctness launch, before timing overwrites them)."""
    return {name: inputs.args[name].clone() for name in inputs.outputs}
