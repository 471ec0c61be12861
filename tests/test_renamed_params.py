"""No name-based diagnosis: the seed kernels with every parameter renamed (``stride_ak`` → ``q7`` ...) give the same
findings with the same severities, in the same order (issue 19). The renamed suite is the built-in suite's own
source rewritten through its syntax tree: parameters, their uses, keyword arguments and the string keys that name
them (argument dicts, ``do_not_specialize`` lists, configs)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from irdiff.diagnose import diagnose

SEEDS: dict[str, tuple[str, list[str], str, list[tuple[str, str]]]] = {
    "matmul": ("irdiff.suites.matmul", ["annotated", "unannotated"], "sm86", [("annotated", "unannotated"), ("unannotated", "annotated")]),
    "persistent-matmul": (
        "irdiff.suites.persistent_matmul",
        ["tiled", "persistent", "persistent-noflatten"],
        "sm90",
        [("persistent", "tiled"), ("persistent-noflatten", "tiled"), ("persistent", "persistent-noflatten")],
    ),
    "rmsnorm": ("irdiff.suites.rmsnorm", ["specialized", "dns"], "sm86", [("dns", "specialized")]),
    "permute": ("irdiff.suites.permute", ["i32", "i64"], "sm86", [("i64", "i32")]),
    "softmax": ("irdiff.suites.softmax", ["stages4", "stages1"], "sm86", [("stages1", "stages4")]),
}  # fmt: skip


def _is_jit(fn: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) or "autotune" in ast.unparse(d) for d in fn.decorator_list)


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.m = mapping

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.m.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self.m.get(node.arg, node.arg)
        self.generic_visit(node)
        return node

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        if node.arg:
            node.arg = self.m.get(node.arg, node.arg)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and node.value in self.m:
            node.value = self.m[node.value]
        return node


def renamed_suite(module: str, out: Path) -> tuple[Path, dict[str, str]]:
    spec = importlib.util.find_spec(module)
    assert spec and spec.origin
    tree = ast.parse(Path(spec.origin).read_text())
    # helpers imported from another built-in suite (persistent-matmul uses matmul's argument builder) are copied in,
    # so the renaming reaches them too
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("irdiff.suites."):
            other = importlib.util.find_spec(node.module or "")
            assert other and other.origin
            defs = {n.name: n for n in ast.parse(Path(other.origin).read_text()).body if isinstance(n, ast.FunctionDef)}
            body.append(ast.parse("from irdiff.suite import Tensor").body[0])  # what the copied helper uses
            body.extend(defs[a.name] for a in node.names)
        else:
            body.append(node)
    tree.body = body
    params: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and _is_jit(node):
            for a in [*node.args.args, *node.args.kwonlyargs]:
                if a.arg not in params:
                    params.append(a.arg)
    mapping = {p: f"q{i}" for i, p in enumerate(params)}
    assert not set(mapping.values()) & set(params)
    new = ast.unparse(ast.fix_missing_locations(_Rename(mapping).visit(tree)))
    out.write_text(new + "\n")
    return out, mapping


@pytest.mark.parametrize("seed", list(SEEDS))
def test_renamed_parameters_same_findings(compile_suite, tmp_path_factory, seed: str) -> None:  # type: ignore[no-untyped-def]
    module, variants, target, pairs = SEEDS[seed]
    path, mapping = renamed_suite(module, tmp_path_factory.mktemp("renamed") / f"renamed_{seed.replace('-', '_')}.py")
    assert any(p.startswith("stride") for p in mapping) or seed in ("permute", "softmax")
    orig = compile_suite(seed, variants, target)
    ren = compile_suite(f"{path}::suite", variants, target)
    for v in variants:  # the renaming reached the kernels
        assert not any(s.name in mapping for s in ren.variants[v].specialization), v
    for a, b in pairs:
        d0, d1 = diagnose(orig, a, b), diagnose(ren, a, b)
        got = [(f.id, f.severity) for f in d1.findings]
        want = [(f.id, f.severity) for f in d0.findings]
        assert got == want, (seed, a, b)
        assert d1.unexplained == d0.unexplained
        assert [sorted(f.causes) for f in d1.findings] == [sorted(f.causes) for f in d0.findings]
