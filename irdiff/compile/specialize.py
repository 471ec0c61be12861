"""Stage 0: the JIT's specialization of each argument, and why.

The outcome (type, ``tt.divisibility``, constexpr) is read from what the installed Triton's own binder produced
(captured through ``knobs.runtime.jit_cache_hook``, whose ``compile`` argument carries ``signature``, ``constants``
and ``attrs``; ``triton/runtime/jit.py``). Nothing here re-implements those rules: this module only reads the
outcome and writes the sentence that explains it from the facts at hand (the value, its alignment, the annotation,
``do_not_specialize``).
"""

from __future__ import annotations

from typing import Any

from irdiff.bundle import ArgSpec
from irdiff.suite import Scalar, Tensor


def _attr_divisibility(attrs: Any, index: int) -> int | None:
    """``tt.divisibility`` for parameter ``index`` from the JIT's attrs dict (``{(i,): [["tt.divisibility", 16]]}``)."""
    if not isinstance(attrs, dict):
        return None
    for key, props in attrs.items():
        k = key if isinstance(key, tuple) else (key,)
        if k == (index,):
            for prop in props or []:
                if prop and prop[0] == "tt.divisibility":
                    return int(prop[1])
    return None


def _lookup(mapping: Any, name: str, index: int) -> Any:
    if not isinstance(mapping, dict):
        return None
    for key in (name, (index,), index):
        if key in mapping:
            return mapping[key]
    return None


def describe_value(value: Any) -> str:
    if isinstance(value, (Tensor, Scalar)):
        return value.describe()
    return repr(value)


def build_specialization(jit_fn: Any, values: dict[str, Any], captured: dict[str, Any]) -> list[ArgSpec]:
    """Per-parameter :class:`ArgSpec` list, in the kernel's parameter order.

    :param jit_fn: the ``JITFunction`` (its ``params`` carry annotations and ``do_not_specialize`` flags).
    :param values: parameter name → example value as given by the suite (``Tensor``, int, …, constexpr values).
    :param captured: the ``compile`` dict the JIT passed to ``jit_cache_hook`` (``signature``, ``constants``,
        ``configs``/``attrs``).
    """
    signature = captured.get("signature", {})
    constants = captured.get("constants", {})
    configs = captured.get("configs") or [{}]
    attrs = configs[0] if configs else {}
    out: list[ArgSpec] = []
    for i, p in enumerate(jit_fn.params):
        raw_ann = p._param.annotation
        ann = None if raw_ann is p._param.empty else _annotation_text(raw_ann)
        value = values.get(p.name)
        ty = _lookup(signature, p.name, i) or ("constexpr" if p.is_constexpr else "?")
        const = _lookup(constants, p.name, i)
        is_const = ty == "constexpr"
        spec = ArgSpec(
            name=p.name,
            index=i,
            type=str(ty),
            divisibility=None if is_const else _attr_divisibility(attrs, i),
            constexpr=repr(const) if is_const else None,
            value=describe_value(value),
            annotation=ann,
            is_constexpr_param=bool(p.is_constexpr),
            do_not_specialize=bool(p.do_not_specialize),
            do_not_specialize_on_alignment=bool(p.do_not_specialize_on_alignment),
        )
        spec.reason = _reason(spec, value)
        out.append(spec)
    return out


def _annotation_text(ann: Any) -> str:
    if isinstance(ann, str):
        return ann
    mod = getattr(ann, "__module__", "") or ""
    name = getattr(ann, "__name__", None) or type(ann).__name__
    if "triton.language" in mod:
        if type(ann).__name__ == "dtype" and isinstance(getattr(ann, "name", None), str):
            return f"tl.{ann.name}"  # `n: tl.int64` is an instance, triton.language.core.dtype("int64")
        return f"tl.{name}"
    if name == "constexpr" or "constexpr" in repr(ann):
        return "tl.constexpr"
    return str(name) if isinstance(ann, type) else repr(ann)


def _reason(s: ArgSpec, value: Any) -> str:
    """Explain the JIT's outcome for one argument in a plain sentence."""
    if s.is_constexpr_param:
        return "declared tl.constexpr: its value is compiled into the kernel"
    if isinstance(value, Scalar):
        if isinstance(value.value, float):
            how = "as torch.compile passes a Python float (the JIT alone would pass fp32); floats are never specialized"
        elif value.specialize:
            how = "the JIT still records divisibility and the constant 1 for it"
        else:
            how = "never specialized (no divisibility, no constant 1), like a dynamic size torch.compile passes"
        return f"typed scalar {value.value!r}: passed as a runtime {s.type} as the suite asks (Scalar), {how}"
    ann = f"annotated `{s.annotation}`" if s.annotation else ""
    if s.type == "constexpr":
        if value is None:
            return "value None: the JIT turns None into a constexpr"
        return f"value {value!r}: the JIT specializes an int equal to 1 to the constant 1"
    if isinstance(value, Tensor):
        if s.divisibility:
            return f"pointer: base address is {value.align}-byte aligned, so the JIT marks it divisible by {s.divisibility}"
        if s.do_not_specialize_on_alignment or s.do_not_specialize:
            which = "do_not_specialize" if s.do_not_specialize else "do_not_specialize_on_alignment"
            return f"pointer listed in {which}: the JIT does not record its alignment"
        return f"pointer: base address is only {value.align}-byte aligned, so no divisibility is recorded"
    if isinstance(value, bool):
        return "bool: passed as a runtime u1"
    if isinstance(value, float):
        if s.type in ("fp64", "f64"):
            return (
                f"float, {ann or 'typed fp64'}: passed as a runtime fp64 (64-bit), never specialized; arithmetic "
                "with it is promoted to fp64"
            )
        if s.type not in ("fp32", "f32", "?"):
            return f"float, {ann or 'typed ' + s.type}: passed as a runtime {s.type}, never specialized"
        return "float: passed as a runtime fp32, never specialized"
    if isinstance(value, int):
        parts: list[str] = []
        if s.do_not_specialize:
            return (
                f"value {value}, listed in do_not_specialize: the JIT keeps it a runtime {s.type} with neither "
                "divisibility nor the constant-1 specialization"
            )
        if value == 1 and ann:
            return (
                f"value 1, {ann}: the JIT types it {s.type} and no longer turns the value 1 into a constant "
                "(the annotation replaces the specialized type)"
            )
        if s.type == "i64" and abs(value) >= 2**31:
            parts.append(f"value {value} does not fit in 32 bits, so the JIT passes it as i64")
        elif ann:
            parts.append(f"{ann}: the JIT types it {s.type}")
        else:
            parts.append(f"value {value}: a runtime {s.type}")
        if s.divisibility:
            parts.append(f"a multiple of {s.divisibility}, so it is marked divisible by {s.divisibility}")
        elif s.do_not_specialize_on_alignment:
            parts.append("listed in do_not_specialize_on_alignment, so no divisibility is recorded")
        elif value % 16:
            parts.append("not a multiple of 16, so no divisibility is recorded")
        else:
            parts.append("no divisibility recorded")
        return "; ".join(parts)
    return f"value {describe_value(value)}: passed as {s.type}"
