"""Shared by the rule modules: the :class:`Context` every rule receives, evidence and wording helpers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from irdiff.diagnose.facts import Ref, VariantFacts
from irdiff.diagnose.model import Evidence
from irdiff.diagnose.params import ParamPairing


@dataclass
class Context:
    """The two variants being compared and their facts; ``ttgir``/``python`` give raw stage texts for tracing (by
    variant name; empty when a test builds the facts by hand)."""

    a: str
    b: str
    fa: VariantFacts
    fb: VariantFacts
    ttgir: dict[str, str] = field(default_factory=dict)
    python: dict[str, str] = field(default_factory=dict)
    # ``a``'s parameters paired with ``b``'s by role (:func:`irdiff.diagnose.params.pair_params`); None: by name.
    pairing: ParamPairing | None = None

    def facts(self, which: str) -> VariantFacts:
        return self.fa if which == self.a else self.fb


# "X in `a` vs Y in `b`" (values quoted per variant), then bare "X vs Y" and "X→Y" between plain values (numbers,
# words, sizes such as 4/2 or 64-bit; never backticked variant names).
_VS_IN = re.compile(r"(?P<x>[^,;:()`]+?)\s+in\s+`[^`]+`\s+vs\s+(?P<y>[^,;:()`]+?)\s+in\s+`[^`]+`")
_PLAIN = r"[\w./%+-]+"
_VS = re.compile(rf"(?<![`\w./%+-])(?P<x>{_PLAIN})\s+vs\s+(?P<y>{_PLAIN})(?![`\w])")
_ARROW = re.compile(rf"(?<![`\w./%+-])(?P<x>{_PLAIN})\s*→\s*(?P<y>{_PLAIN})")


def quoted_comparisons(title: str) -> list[tuple[str, str]]:
    """The value pairs a finding's title sets against each other: ``X in `a` vs Y in `b```, ``X vs Y``, ``X→Y``
    (``[("0/0", "0/0")]`` for "Async copies (prologue/loop): 0/0 in `a` vs 0/0 in `b`")."""
    out: list[tuple[str, str]] = []
    rest = title
    for m in _VS_IN.finditer(title):
        x, y = m.group("x").split(), m.group("y").split()
        out.append((" ".join(x[-len(y) :]), " ".join(y)))  # "count 200 in `a` vs 408 in `b`": 200 vs 408
        rest = rest.replace(m.group(0), " ")
    for pat in (_VS, _ARROW):
        out += [(m.group("x"), m.group("y")) for m in pat.finditer(rest)]
    return out


def states_no_difference(title: str) -> bool:
    """True when the title quotes values as a difference and every pair of them is equal ("0/0 vs 0/0"): the rule
    fired on something its title does not show. :func:`irdiff.diagnose.rules.run_rules` drops such findings."""
    pairs = quoted_comparisons(title)
    return bool(pairs) and all(x == y for x, y in pairs)


def same_param(fb: VariantFacts, name_a: str, name_b: str) -> bool:
    """Whether ``name_a`` (a name in the other variant, e.g. an access's pointer origin) and ``name_b`` (a name in
    ``fb``'s variant) are the same parameter: paired by role (``fb.peer_names``, from
    :func:`irdiff.diagnose.params.pair_params`) when ``name_a`` is a parameter, else equal names (local values)."""
    return (fb.peer_names[name_a] if name_a in fb.peer_names else name_a) == name_b


def _ev(variant: str, ref: Ref | None, text: str | None = None) -> Evidence:
    if ref is None:
        return Evidence(variant, "spec", None, text or "")
    return Evidence(variant, ref.stage, ref.line, text if text is not None else ref.text)


def _names(items: list[str]) -> str:
    quoted = [f"`{x}`" for x in items]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _bytes(n: int | None) -> str:
    return "?" if n is None else f"{n} byte" if n == 1 else f"{n} bytes"


def _kb(n: int | None) -> str:
    if n is None:
        return "?"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KB"
    return f"{n / 1024:.1f} KB ({n} B)" if n >= 1024 else f"{n} B"


def _param_line(python: str, kernel: str, name: str) -> Ref | None:
    """The line of parameter ``name`` in ``def kernel(...)`` of the saved source."""
    lines = python.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(rf"\s*def\s+{re.escape(kernel)}\s*\(", ln)), None)
    if start is None:
        return None
    for i in range(start, min(start + 80, len(lines))):
        if re.search(rf"(?:\(|,|^)\s*{re.escape(name)}\s*(?::|,|=|\))", lines[i]):
            return Ref("python", i + 1, lines[i].strip())
        if re.search(r"\)\s*(->[^:]*)?:\s*$", lines[i]):  # the signature ends here (also on the def's own line)
            break
    return None


def _decorator_line(python: str, kernel: str, word: str) -> Ref | None:
    """A line mentioning ``word`` (``do_not_specialize``) in the decorator above ``def kernel``."""
    lines = python.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(rf"\s*def\s+{re.escape(kernel)}\s*\(", ln)), None)
    if start is None:
        return None
    for i in range(start - 1, max(start - 15, -1), -1):
        if word in lines[i]:
            return Ref("python", i + 1, lines[i].strip())
        if lines[i].strip() == "" or lines[i].lstrip().startswith("def "):
            break
    return None


def _c(f: VariantFacts, stage: str, key: str) -> int:
    return f.counts.get(stage, {}).get(key, 0)


def _same_warps(ctx: Context) -> bool:
    """Per-thread counts (instructions, registers) compare only when both variants use the same ``num_warps``."""
    return bool(ctx.fa.options.get("num_warps") == ctx.fb.options.get("num_warps"))


def _warps_note(ctx: Context) -> str:
    """When ``num_warps`` differs: why per-thread counts differ without more work per CTA (one sentence), else ""."""
    wa, wb = ctx.fa.options.get("num_warps"), ctx.fb.options.get("num_warps")
    if wa == wb or not isinstance(wa, int) or not isinstance(wb, int) or min(wa, wb) <= 0:
        return ""
    k = max(wa, wb) / min(wa, wb)
    times = "twice" if k == 2 else f"{k:g}×"
    frac = "half" if k == 2 else f"1/{k:g} of"
    return (
        f" `num_warps` is {wa} in `{ctx.a}` and {wb} in `{ctx.b}`: per-thread counts scale with the work per thread "
        f"({times} the threads, {frac} the instructions each: the same work per CTA), so they do not compare directly."
    )


def _unrolls(f: VariantFacts) -> list[int]:
    """Factors of the loops ``triton-loop-unroll`` unrolled in TTIR (``tl.range(..., loop_unroll_factor=N)``)."""
    return sorted(lp.unroll for lp in f.loops_ttir if lp.unroll > 1)


def _unroll_note(ctx: Context) -> str:
    """When the variants unroll their loops differently: why the per-iteration copies, buffers and instruction counts
    scale with the factor without more work or a deeper pipeline (one sentence), else ""."""
    ua, ub = _unrolls(ctx.fa), _unrolls(ctx.fb)
    if ua == ub:
        return ""

    def say(u: list[int]) -> str:
        return " and ".join(f"{n}×" for n in u) if u else "not"

    return (
        f" The loops are unrolled {say(ua)} in `{ctx.a}` and {say(ub)} in `{ctx.b}` (`loop_unroll_factor`): each copy "
        "of the body has its own loads, so their async copies, shared-memory rings and instructions multiply by the "
        "factor for the same elements and the same pipeline depth; the counts name no slower side."
    )


def _ratio(x: float, y: float) -> str:
    """``x/y`` as "(0.5×)", or "" when ``y`` is 0."""
    return f" ({x / y:.2g}×)" if y else ""


def _stem_of(line: str) -> str:
    """Python name hint of the value an MLIR line defines (``%b_112 = ...`` → ``b``)."""
    m = re.match(r"^%([A-Za-z_][\w]*?)(?:_\d+)?\s*=", line)
    return m.group(1) if m and not re.match(r"^(arg|c|cst)\d*$", m.group(1)) else ""
