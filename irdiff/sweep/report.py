"""The sweep's overview HTML (one sortable table, each row linking to the pair's report) and Markdown digest (for
a pull-request comment), both from the rows of :mod:`irdiff.sweep.table`.

The HTML is self-contained (inline CSS and a few lines of JavaScript for sorting; works offline) and every value
is escaped (jinja2 autoescape). The digest stays under GitHub's 65,536-character comment limit.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from irdiff.sweep.table import SEVERITY_RANK

__all__ = ["render_digest", "render_overview", "summary_line", "write_digest", "write_overview"]

_HEADERS = [
    ("suite", "str"), ("pair", "str"), ("target", "str"), ("triton", "str"), ("#", "num"), ("config", "str"),
    ("shape", "str"), ("severity", "num"), ("root finding", "str"), ("findings", "num"), ("counts≠", "num"),
    ("registers a|b", "num"), ("spills a|b (B)", "num"), ("shared a|b (B)", "num"),
]  # fmt: skip

DIGEST_LIMIT = 60_000


def _pair(a: Any, b: Any) -> str:
    return "|".join("?" if v is None else str(v) for v in (a, b))


def summary_line(rows: list[dict[str, Any]]) -> str:
    """``12 ok, 1 failed · roots: 3 major, 5 minor · 4 identical``."""
    ok = [r for r in rows if r.get("status") == "ok"]
    sev = Counter(r["root_severity"] for r in ok if r.get("root_severity"))
    parts = [f"{len(ok)} ok", f"{len(rows) - len(ok)} failed"]
    roots = ", ".join(f"{sev[s]} {s}" for s in sorted(sev, key=lambda s: -SEVERITY_RANK.get(s, -1)))
    text = ", ".join(parts) + (f" · roots: {roots}" if roots else "")
    ident = sum(bool(r.get("identical")) for r in ok)
    return text + (f" · {ident} identical" if ident else "")


def render_overview(rows: list[dict[str, Any]], name: str) -> str:
    """The overview page (HTML text)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("irdiff.sweep", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    template = env.get_template("overview.html.j2")
    return template.render(
        name=name, rows=rows, headers=_HEADERS, summary=summary_line(rows), sev_rank=SEVERITY_RANK, pair=_pair
    )


def write_overview(rows: list[dict[str, Any]], path: str | Path, name: str) -> Path:
    """Write :func:`render_overview` to ``path``."""
    from irdiff.textsafe import clean

    p = Path(path)
    p.write_text(clean(render_overview(rows, name)), encoding="utf-8")
    return p


def _severity(row: dict[str, Any]) -> str:
    """``major`` or, when an effect is more severe than the root, ``major (chain critical)``."""
    root, chain = row.get("root_severity") or "", row.get("chain_severity")
    return f"{root} (chain {chain})" if chain and chain != root else root


def _md(text: Any) -> str:
    """A table cell: pipes and newlines escaped, HTML-significant characters escaped."""
    import html

    return html.escape(str(text)).replace("|", "\\|").replace("\n", " ")


def render_digest(rows: list[dict[str, Any]], name: str, changes: list[str] | None = None) -> str:
    """Markdown: the summary line, the gate's changes (when given), then the rows with a finding, most severe
    first, and the failures; cut to stay under :data:`DIGEST_LIMIT` characters."""
    from irdiff.sweep.gate import describe

    out = [f"### irdiff sweep: {_md(name)}", "", summary_line(rows), ""]
    if changes is not None:
        out += ["**Changes since the baseline**", ""]
        out += [f"- {_md(c)}" for c in changes] or ["- none"]
        out.append("")
    ok = [r for r in rows if r.get("status") == "ok" and r.get("root_id")]
    ok.sort(
        key=lambda r: (-SEVERITY_RANK.get(r.get("chain_severity") or r.get("root_severity") or "", -1), describe(r))
    )
    if ok:
        out += [
            "| severity | pair and setting | root finding | registers a\\|b | shared a\\|b |",
            "|---|---|---|---|---|",
        ]
        for r in ok:
            out.append(
                f"| {_md(_severity(r))} | {_md(describe(r))} | `{_md(r['root_id'])}` {_md(r['root_title'] or '')}"
                f" | {_md(_pair(r['registers_a'], r['registers_b']))} | {_md(_pair(r['shared_a'], r['shared_b']))} |"
            )
        out.append("")
    bad = [r for r in rows if r.get("status") != "ok"]
    if bad:
        out += ["**Failed**", ""] + [f"- {_md(describe(r))}: {_md(r.get('error') or '')}" for r in bad] + [""]
    text = "\n".join(out)
    if len(text) > DIGEST_LIMIT:
        cut = text[: DIGEST_LIMIT - 200].rsplit("\n", 1)[0]
        text = cut + "\n\n… (cut: see overview.html and results.parquet for every row)\n"
    return text


def write_digest(rows: list[dict[str, Any]], path: str | Path, name: str, changes: list[str] | None = None) -> Path:
    """Write :func:`render_digest` to ``path``."""
    from irdiff.textsafe import clean

    p = Path(path)
    p.write_text(clean(render_digest(rows, name, changes)), encoding="utf-8")
    return p
