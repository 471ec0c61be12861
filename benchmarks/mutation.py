"""Mutation testing of one core module with mutmut (issue 19): score, survivors, and their diffs.

    PYTHONPATH=. python benchmarks/mutation.py irdiff/align.py            # the module's fast test selection
    PYTHONPATH=. python benchmarks/mutation.py irdiff/normalize/ptx.py --tests tests/test_normalize.py
    PYTHONPATH=. python benchmarks/mutation.py --list                      # the modules and their test selections

mutmut 3 reads its configuration only from ``./pyproject.toml`` (``[tool.mutmut]``) and keeps its state in
``./mutants/``, so one configuration serves the whole repository and every run mutates everything ``only_mutate``
names. To run ONE module with ONE fast test selection (the machine is small; the full suite compiles kernels) this
script builds a scratch project per module under ``--workdir`` (a copy of ``irdiff/``, ``tests/`` and
``pyproject.toml`` whose ``[tool.mutmut]`` names only that module and its tests), runs ``nice -n 10 mutmut run
--max-children N`` there, and writes ``benchmarks/results/mutation/<module>.md``: the counts, the score, and every
mutant that was not killed with its diff (``mutmut show``) so that it can be argued equivalent or killed by a new test. Arguments written by hand into the
report's ``Argument:`` lines are kept by the next run for mutants whose diff did not change.

Score = (killed + timeout) / (all − skipped). A mutant with no covering test counts as NOT killed. mutmut 3 mutates
function and method bodies only (module-level constants such as compiled regexes are not mutated: the pattern
tests in ``tests/test_normalize_patterns.py`` cover those).

Too slow for CI (minutes per module on 2 cores): run it when a core module changes. The selections below avoid
kernel compiles except through the shared compile cache (``IRDIFF_CACHE_DIR``), which stays warm because only the
mutated module changes and it is not a compile source (compile/, bundle, stages, suite, target) — except for
``irdiff/bundle.py``, whose selection (``tests/test_bundle.py``) reads the recorded bundle under ``tests/data/bundles/``
and compiles nothing.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "mutation"

# Fast test selections per core module (pytest arguments). Tests that need a compiled bundle get it from the shared
# compile cache; hypothesis tests keep their own max_examples.
_NORMALIZE = ["tests/test_normalize.py", "tests/test_normalize_patterns.py"]
_MECHANISMS = ["tests/test_mechanisms.py", "tests/test_rules.py", "tests/test_root_kinds.py"]
SELECTIONS: dict[str, list[str]] = {
    "irdiff/textsafe.py": ["tests/test_textsafe.py", "tests/test_reliability.py::test_clean_leaves_no_control"],
    "irdiff/run/stats.py": ["tests/test_stats.py"],
    "irdiff/align.py": [
        "tests/test_align_pairing.py",
        "tests/test_align_patience.py",
        "tests/test_align_units.py",
        "tests/test_align.py",
        "-k",
        "not moved_kernel_with_renamed_local",
    ],
    "irdiff/normalize/__init__.py": [*_NORMALIZE, "tests/test_normalize_parallel.py", "tests/test_normalize_memory.py"],
    # the SASS whole-text path (BulkBuilder.extend/searched/searched_alone) is checked against the reference Builder there
    "irdiff/normalize/builder.py": [
        "tests/test_normalize_builder.py",
        "tests/test_normalize_ptx.py",
        "tests/test_normalize_fast.py::test_sass_whole_text_path_equals_the_reference",
        "tests/test_normalize_fast.py::test_sass_whole_text_path_on_a_listing",
        # BulkBuilder._name_new (many new symbols per chunk) is taken by the LLIR whole-text path
        "tests/test_normalize_fast.py::test_bulk_builder_equals_the_reference_builder",
        "tests/test_normalize_fast.py::test_bulk_builder_equals_the_reference_on_real_stages",
        "tests/test_normalize_fast.py::test_bulk_builder_steps_aside_when_every_placeholder_is_taken",
        "tests/test_normalize_fast.py::test_llir_whole_text_path_equals_the_reference",
        "tests/test_normalize_fast.py::test_llir_whole_text_path_on_a_module",
        # per_line_after, the reference cycles build() breaks
        "tests/test_normalize_memory.py",
    ],
    "irdiff/normalize/text.py": [
        "tests/test_normalize_text.py",
        "tests/test_planted_bugs.py",
        "tests/test_normalize_ptx.py",
        "tests/test_normalize_memory.py",  # RawLines, raw_lines_of
    ],
    "irdiff/normalize/mlir.py": [*_NORMALIZE, "tests/test_normalize_mlir.py", "tests/test_normalize_memory.py"],
    "irdiff/normalize/llir.py": [
        "tests/test_normalize_llir.py",
        "tests/test_normalize_patterns.py",
        "tests/test_normalize.py::test_llir_renumbering",
        # the whole-text path (_bulk_llir) is checked against the reference walk (_LlirWalk) there
        "tests/test_normalize_fast.py::test_llir_whole_text_path_equals_the_reference",
        "tests/test_normalize_fast.py::test_llir_whole_text_path_on_a_module",
        "tests/test_normalize_fast.py::test_llir_whole_text_path_on_real_stages",
    ],
    "irdiff/normalize/ptx.py": ["tests/test_normalize_ptx.py"],
    "irdiff/normalize/sass.py": [
        *_NORMALIZE,
        "tests/test_normalize_sass.py",
        "tests/test_normalize_fast.py::test_sass_whole_text_path_equals_the_reference",
        "tests/test_normalize_fast.py::test_sass_whole_text_path_on_a_listing",
        "tests/test_normalize_fast.py::test_sass_whole_text_path_after_dropped_lines_and_label_hazards",
    ],
    "irdiff/normalize/locations.py": [
        "tests/test_locations.py",
        "tests/test_html.py::test_source_map_follows_triton_locations",
        "tests/test_html.py::test_source_map_formats_of_triton_36",
        "tests/test_html.py::test_source_map_never_raises",
    ],
    # Render escaping: run these with --only on the escaping functions (see the README of the results).
    "irdiff/render/html.py": ["tests/test_escaping.py"],
    "irdiff/render/markdown.py": [
        "tests/test_escaping.py",
        "tests/test_markdown.py::test_code_span_is_literal",
        "tests/test_markdown.py::test_text_is_literal",
    ],
    "irdiff/render/terminal.py": [
        "tests/test_escaping.py",
        "tests/test_terminal.py::test_control_characters_are_neutralised",
    ],
    "irdiff/bundle.py": [
        "tests/test_bundle.py",
        "tests/test_reliability.py::test_install_dir_replaces_in_one_step",
        "tests/test_reliability.py::test_dead_process_temporaries_are_reclaimed",
        "tests/test_reliability.py::test_confined_paths",
    ],
    "irdiff/diagnose/counts.py": ["tests/test_counts.py", "tests/test_mechanisms.py::test_counts_keys"],
    "irdiff/diagnose/params.py": ["tests/test_params.py", "tests/test_rule_units.py"],
    "irdiff/diagnose/rules/resources.py": ["tests/test_rule_resources.py", "tests/test_truth_findings.py"],
    "irdiff/diagnose/rules/sass.py": [
        "tests/test_rule_sass.py",
        "tests/test_truth_findings.py",
        "tests/test_rule_atomic_return.py",
    ],
    "irdiff/diagnose/provenance.py": ["tests/test_provenance.py"],
    "irdiff/diagnose/passes.py": ["tests/test_passes.py"],
    "irdiff/diagnose/counters.py": ["tests/test_counters.py"],
    "irdiff/diagnose/rules/mma.py": ["tests/test_rule_mma.py"],
    "irdiff/diagnose/rules/index_math.py": ["tests/test_rule_index_math.py"],
    "irdiff/diagnose/rules/ptx.py": [
        "tests/test_rule_ptx.py",
        "tests/test_truth_findings.py",
        "tests/test_rule_loops.py",
        "tests/test_rule_atomic_ops.py::test_memory_ops_count_atomics_as_global_memory_ops",
        "tests/test_rule_atomic_ops.py::test_memory_ops_list_and_total_the_atomics",
        # the same atomics in another form (atom with a result vs red) are not memory-op rows
        "tests/test_roots_apply.py::test_atomic_rule_claims_sem_and_the_attribute_change_follows",
    ],
    # on a loaded 2-core machine add `-k "not renaming_every_local"` (the hypothesis property, ~1 s a mutant)
    "irdiff/diagnose/source.py": [
        "tests/test_source_diff.py",
        "tests/test_source_words.py",
        "tests/test_source_records.py",
    ],
    "irdiff/diagnose/rules/parameters.py": ["tests/test_rule_parameters.py", "tests/test_config_shown.py"],
    # tests/test_facts_text.py: the helpers on real IR text (fast); tests/test_facts.py extracts the facts of whole
    # compiles in each test (seconds per mutant on 2 cores: locally, run the helpers with --only);
    # tests/test_facts_kinds.py calls invariant_loads, _name_loads/_load_name, ttir_int_width_facts and
    # lowering_facts on the texts of tests/suites/facts_kinds.py
    "irdiff/diagnose/facts.py": [
        "tests/test_facts_text.py",
        "tests/test_facts_kinds.py",
        "tests/test_facts.py",
        "tests/test_planted_bugs.py",
        "tests/test_rule_index_math.py",
        "tests/test_rules.py::test_occupancy_limits",
        "tests/test_rules.py::test_occupancy_rounds_registers_per_warp",
        "tests/test_rules.py::test_sass_calls_branch_vs_subroutine",
        "tests/test_rules.py::test_strip_loc_idempotent",
        "tests/test_target.py::test_spellings",
        # address_strides/_const_int/_operands/_combine (the strides of an address, read from its TTGIR) and
        # _mark_unrolled are reached through the facts of the new-user kernels and the loop rules' pairs
        "tests/test_newuser_kinds.py",
        "tests/test_rule_loops.py",
        "tests/test_rule_coalescing.py",
    ],
    "irdiff/diagnose/mechfacts.py": [
        "tests/test_mechfacts.py",
        "tests/test_mechfacts_hints.py",
        "tests/test_mechfacts_dots.py",
        "tests/test_mechfacts_atomics.py",
        "tests/test_rule_atomic_return.py",
        "tests/test_mech_signs.py",
        "tests/test_mechfacts_rings.py",
    ],
    "irdiff/diagnose/settings.py": ["tests/test_settings_findings.py"],
    "irdiff/diagnose/rules/specialization.py": ["tests/test_rule_specialization.py", "tests/test_rule_units.py"],
    # roots.py: tests/test_roots_units.py calls the helpers (mechanisms, stage-0 words, settings/source/attribute
    # roots, claims, ordering, register estimates); tests/test_roots_apply.py calls apply_roots, _add_trace,
    # register_story and _pass_finding on the rules' findings of small compiled pairs (captured once per pair)
    "irdiff/diagnose/roots.py": [
        "tests/test_roots_units.py",
        "tests/test_roots_apply.py",
        "tests/test_roots_fixes.py",
        # transposed_accesses and the fp64 broadcast-multiply register story (real sm80 compiles)
        "tests/test_transposed_root.py",
        "tests/test_fp64_dot_registers.py",
    ],
    "irdiff/diagnose/rules/pipelining.py": ["tests/test_rule_pipelining.py", "tests/test_truth_findings.py"],
    "irdiff/diagnose/rules/precision.py": ["tests/test_rule_precision.py", "tests/test_mech_signs.py"],
    # test_diagnose_units.py: the chain machinery without a compile; the two others run diagnose() on compiled
    # matmuls (seconds per mutant on 2 cores). test_seed_001_persistent expects 3.9's registers (fails under 3.6).
    "irdiff/diagnose/texts.py": ["tests/test_texts.py"],
    # The mechanism rules are exercised by the unit tests of tests/test_mechanisms.py (test_unit_*) and by whole
    # diagnoses of compiled variant pairs in both orders (tests/test_mechanisms.py, tests/test_rules.py,
    # tests/test_root_kinds.py). Every diagnosis calls every rule, so each selection keeps only the tests about that
    # module's findings (a surviving mutant runs all of them). atomics, hints and mma_lowering have fast unit tests of
    # their own (tests/test_rule_<module>.py: the rule called on the Context of real compiled pairs), listed first and
    # matched by the -k expression (pytest matches the module name too).
    "irdiff/diagnose/rules/hints.py": [
        "tests/test_rule_hints.py",
        *_MECHANISMS,
        "-k",
        "test_rule_hints or unit_hints or unit_wait_depth or cache_hints or compiler_warning or two_stage_prefetch or hint",
    ],
    "irdiff/diagnose/rules/atomics.py": [
        "tests/test_rule_atomics.py",
        "tests/test_rule_atomic_fences.py",
        "tests/test_rule_atomic_ops.py",
        "tests/test_rule_atomic_return.py",
        *_MECHANISMS,
        "-k",
        "atomic or cas or convert_shared or split_k or test_rule_atomics or fence",
    ],
    "irdiff/diagnose/rules/loops.py": [
        "tests/test_rule_loops.py",
        "tests/test_two_nests.py",
        *_MECHANISMS,
        "-k",
        "test_rule_loops or loop or unroll or constexpr_changed or pipeline_rules or num_stages or two_nests",
    ],
    "irdiff/diagnose/rules/coalescing.py": [
        "tests/test_rule_coalescing.py",
        "tests/test_newuser_kinds.py",
        *_MECHANISMS,
        "-k",
        "test_rule_coalescing or newuser or contiguity or alignment_only or misaligned or accesses_paired or load_labelled or transposed",
    ],
    "irdiff/diagnose/rules/lowering.py": [
        "tests/test_rule_lowering.py",
        *_MECHANISMS,
        "-k",
        "test_rule_lowering or mask_alignment or lowered_facts",
    ],
    "irdiff/diagnose/rules/mma_lowering.py": [
        "tests/test_rule_mma_lowering.py",
        "tests/test_rule_mma_rank.py",
        *_MECHANISMS,
        "-k",
        "test_rule_mma_lowering or test_rule_mma_rank or fma_lowering or mma_downgrade or blackwell or wait_depth or precision_dot or tf32x3 or fp8",
    ],
    # the shared helpers, called directly (evidence, sizes, source lines of real suite files, warps note, title pairs);
    # every rule's tests exercise them too, but these alone kill 98 % (seconds per run)
    "irdiff/diagnose/rules/common.py": ["tests/test_rule_common.py", "tests/test_rule_loops.py"],
    # Registration runs at import; tests/test_rule_registry.py calls rule/declare/_check on fresh declarations.
    "irdiff/diagnose/rules/registry.py": ["tests/test_rule_registry.py", "tests/test_rule_units.py"],
    "irdiff/diagnose/__init__.py": [
        "tests/test_diagnose_units.py",
        "tests/test_diagnose.py",
        "tests/test_verdicts_agree.py",
        "tests/test_inert_source.py",
        "-k",
        "not test_seed_001_persistent",
    ],
}


# Decorators applied after the definition in the scratch copy (mutmut 3 never mutates a decorated function): the
# rule registry's ``@rule(...)``, which registers the function object it is given and returns it unchanged.
_UNDECORATE = {"rule"}


def _undecorate(path: Path) -> None:
    """Rewrite ``@rule(...)\ndef f(...): ...`` as ``def f(...): ...\nf = rule(...)(f)`` in the scratch copy of a
    module, so mutmut mutates the rule bodies; the registration runs at the same point of the import, with the
    function mutmut dispatches through (same ``__module__`` and ``__name__``)."""
    import ast

    text = path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []  # (first line, last line, replacement), 1-based, inclusive
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not node.decorator_list:
            continue
        decos = node.decorator_list
        if not all(
            isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id in _UNDECORATE for d in decos
        ):
            continue
        after = "".join(f"{node.name} = {ast.get_source_segment(text, d)}({node.name})\n" for d in reversed(decos))
        first, last = decos[0].lineno, node.end_lineno or node.lineno
        body = "".join(lines[node.lineno - 1 : last])
        edits.append((first, last, body + after))
    for first, last, new in reversed(edits):
        lines[first - 1 : last] = [new]
    if edits:
        path.write_text("".join(lines))


def _slug(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".")


# The benchmark scripts, also copied into mutmut's mutants/ (the tests run there and import them from there).
_BENCH_SCRIPTS = sorted(f"benchmarks/{p.name}" for p in (ROOT / "benchmarks").glob("*.py"))


def _pyproject(module: str, tests: list[str]) -> str:
    """The repository's pyproject.toml with a ``[tool.mutmut]`` that mutates only ``module`` and runs ``tests``."""
    text = (ROOT / "pyproject.toml").read_text()
    text = re.sub(r"\n\[tool\.mutmut\]\n(?:(?!\n\[).)*", "\n", text, flags=re.S)
    conf = {
        "source_paths": ["irdiff"],
        "only_mutate": [module],
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q"],
        "pytest_add_cli_args_test_selection": tests,
        "use_git_change_detection": False,
        # Recorded GPU results read by tests (tests/test_verdicts_agree.py reads benchmarks/results/*/records.json),
        # and the benchmark scripts some tests import (tests/test_normalize_parallel.py: bench_align_large's generator).
        "also_copy": ["benchmarks/results", *_BENCH_SCRIPTS],
    }
    lines = ["", "[tool.mutmut]"] + [f"{k} = {json.dumps(v)}" for k, v in conf.items()]
    return text + "\n".join(lines) + "\n"


def _status_of(workdir: Path, module: str) -> dict[str, str]:
    """mutant name -> status, read from mutmut's own meta file for the module."""
    meta = workdir / "mutants" / (module + ".meta")
    data = json.loads(meta.read_text())
    from mutmut.stats import status_by_exit_code

    return {k: status_by_exit_code[v] for k, v in data["exit_code_by_key"].items()}


def run(
    module: str,
    tests: list[str],
    workdir: Path,
    children: int,
    fresh: bool,
    survivors: bool = False,
    only: list[str] | None = None,
) -> Path:
    names: list[str] = list(only or [])
    if survivors:
        # Re-test only what the last run did not kill (after adding tests to the same selection's files).
        names = sorted(k for k, s in _status_of(workdir, module).items() if s not in ("killed", "timeout", "skipped"))
        if only:
            names = [k for k in names if any(fnmatch.fnmatch(k, g) for g in only)]
        if not names:
            return _report(module, tests, workdir, _status_of(workdir, module), 0.0, survivors=True)
        fresh = False
    if fresh and workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    for name in ("irdiff", "tests"):
        if (workdir / name).exists():
            shutil.rmtree(workdir / name)
        shutil.copytree(ROOT / name, workdir / name, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    if (workdir / "benchmarks" / "results").exists():
        shutil.rmtree(workdir / "benchmarks" / "results")
    shutil.copytree(ROOT / "benchmarks" / "results", workdir / "benchmarks" / "results")
    # Some tests import a benchmark's input generator (tests/test_normalize_parallel.py: bench_align_large).
    for script in (ROOT / "benchmarks").glob("*.py"):
        shutil.copy2(script, workdir / "benchmarks" / script.name)
    _undecorate(workdir / module)
    (workdir / "pyproject.toml").write_text(_pyproject(module, tests))
    env = dict(os.environ)
    # The tests (and the CLI subprocesses some start) must import the mutated copy, never the worktree.
    # (The folder must exist before mutmut starts: Python caches a missing path entry as unimportable.)
    (workdir / "mutants").mkdir(exist_ok=True)
    env["PYTHONPATH"] = str(workdir / "mutants")
    env.setdefault("IRDIFF_CACHE_DIR", "/tmp/irdiff-cache-shared")
    mutmut = str(Path(sys.executable).parent / "mutmut")
    t0 = time.monotonic()
    proc = subprocess.run(
        ["nice", "-n", "10", mutmut, "run", "--max-children", str(children), *names],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.monotonic() - t0
    (workdir / "mutmut.log").write_text(proc.stdout + proc.stderr)
    meta = workdir / "mutants" / (module + ".meta")
    if proc.returncode != 0 or not meta.exists():
        sys.stderr.write((proc.stdout + proc.stderr)[-3000:])
        raise SystemExit(f"mutmut failed on {module} (exit {proc.returncode}); log: {workdir / 'mutmut.log'}")
    status = _status_of(workdir, module)
    if only:
        status = {k: v for k, v in status.items() if any(fnmatch.fnmatch(k, g) for g in only)}
    return _report(module, tests, workdir, status, seconds, only, survivors=survivors)


def _report(
    module: str,
    tests: list[str],
    workdir: Path,
    status: dict[str, str],
    seconds: float,
    only: list[str] | None = None,
    survivors: bool = False,
) -> Path:
    counts: dict[str, int] = {}
    for s in status.values():
        counts[s] = counts.get(s, 0) + 1
    # Mutants a stopped run never reached ("not checked": the run was cut at its time budget, see --report) are
    # left out of the score and named as not run.
    unchecked = counts.get("not checked", 0)
    total = len(status) - counts.get("skipped", 0) - unchecked
    killed = counts.get("killed", 0) + counts.get("timeout", 0) + counts.get("caught by type check", 0)
    score = 100.0 * killed / total if total else 100.0
    out = [
        f"# Mutation score: `{module}`",
        "",
        f"- command: `PYTHONPATH=. python benchmarks/mutation.py {module}` (mutmut {_mutmut_version()}, "
        f"Python {sys.version.split()[0]}, {time.strftime('%Y-%m-%d %H:%M %Z')}, {f'{seconds:.0f} s wall' if seconds else 'written by --report'}, niced, "
        f"{_machine()})",
        f"- tests: `pytest {' '.join(tests)}`",
        *(
            ["- then `--survivors`: the mutants not killed re-run after new tests (wall time above is the re-run)"]
            if survivors
            else []
        ),
        *([f"- **partial run**: only the mutants matching `{' '.join(only)}` (`--only`)"] if only else []),
        *(
            [
                f"- **stopped early**: {unchecked} of {len(status)} mutants were not run (the run was stopped at its "
                f"time budget); the score is over the {len(status) - unchecked} that ran. Not run, by function: "
                + ", ".join(f"`{k}` {v}" for k, v in _by_function(status, "not checked").items())
            ]
            if unchecked
            else []
        ),
        f"- mutants: {len(status)}; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
        f"- **score: {killed}/{total} = {score:.1f} %** (target ≥ 85 %)",
        "",
        "## Mutants not killed",
        "",
    ]
    done = ("killed", "timeout", "caught by type check", "skipped", "not checked")
    alive = sorted(k for k, s in status.items() if s not in done)
    if not alive:
        out.append("None.")
    path = RESULTS / f"{_slug(module)}.md"
    argued = _arguments(path)
    for name, diff in _diffs(workdir, module, alive).items():
        argument = argued.get((name, diff), "_(not yet argued)_")
        out += [f"### `{name}` — {status[name]}", "", f"Argument: {argument}", "", "```diff", diff, "```", ""]
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    _summary()
    print(f"{module}: {killed}/{total} = {score:.1f} % ({len(alive)} not killed) -> {path.relative_to(ROOT)}")
    return path


def _by_function(status: dict[str, str], which: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, s in status.items():
        if s == which:
            f = re.sub(r"__mutmut_\d+$", "", k).rsplit(".", 1)[-1]
            out[f] = out.get(f, 0) + 1
    return out


def _machine() -> str:
    """Where the run happened: CPU count and the Triton release the tests compiled with (the selections compile
    through the compile cache, so a run on another host, e.g. the lent GPU host's 16 cores, can use another release)."""
    try:
        from importlib.metadata import version

        triton = f"Triton {version('triton')}"
    except Exception:  # noqa: BLE001 - no Triton installed: say so rather than fail the report
        triton = "no Triton"
    return f"{os.cpu_count()} CPUs, {triton}"


def _summary() -> None:
    """benchmarks/results/mutation/README.md: one row per module report in the folder."""
    rows = []
    for report in sorted(RESULTS.glob("irdiff.*.md")):
        text = report.read_text()
        module = re.search(r"^# Mutation score: `([^`]+)`", text, re.M)
        score = re.search(r"\*\*score: (\d+)/(\d+) = ([\d.]+) %\*\*", text)
        tests = re.search(r"^- tests: `pytest ([^`]*)`", text, re.M)
        when = re.search(r"Python [\d.]+, ([^,]+),", text)
        if not (module and score and tests):
            continue
        alive = int(score[2]) - int(score[1])
        partial = re.search(r"^- \*\*partial run\*\*: only the mutants matching `([^`]*)`", text, re.M)
        stopped = re.search(r"^- \*\*stopped early\*\*: (\d+) of (\d+) mutants were not run", text, re.M)
        name = f"`{module[1]}`" + (f" (partial: `{partial[1]}`)" if partial else "")
        if stopped:
            name += f" (stopped early: {stopped[1]} of {stopped[2]} mutants not run)"
        # a hand-written header line: the module changed after the run and these mutants were not re-run
        stale = re.search(r"^- \*\*not re-run since a change\*\*: (\d+) of (\d+) mutants", text, re.M)
        if stale:
            name += f" (changed since the run: {stale[1]} of {stale[2]} mutants not re-run)"
        rows.append(
            f"| {name} | {score[1]}/{score[2]} | **{score[3]} %** | {alive} | [{report.name}]({report.name}) "
            f"| `{tests[1]}` | {when[1] if when else ''} |"
        )
    head = [
        "# Mutation scores of the core modules (mutmut)",
        "",
        "Written by `PYTHONPATH=. python benchmarks/mutation.py MODULE` (one row per module run so far; target ≥ 85 %"
        " killed; each report lists the mutants not killed, argued equivalent or marked not yet killed).",
        "",
        "mutmut 3 mutates function and method bodies only: module-level constants (compiled regexes, thresholds such as"
        " `irdiff.align._SIMILAR`) are never mutated. The issue's planted bugs have targeted tests instead:"
        " `tests/test_align_pairing.py` (pairing threshold 0.5 → 0.8, a module constant) and `tests/test_planted_bugs.py`"
        " (`loc(` word boundary; occupancy's per-warp register rounding in `irdiff/diagnose/facts.py`).",
        "",
        "Memoized functions: mutmut's default runner runs the clean test selection in its own process and forks every"
        " mutant from it, so an `lru_cache` filled by the clean run answers for the mutated function in every mutant"
        " (its mutants survive without being tested). A selection over a memoized module must clear the memos per"
        " test (`tests/test_counts.py` clears `irdiff.diagnose.counts.clear_memos()` in an autouse fixture); runs of"
        " modules with memos made before that (`normalize/llir.py`, `normalize/sass.py`, `normalize/text.py`) may"
        " list such false survivors.",
        "",
        "mutmut 3 also never mutates a decorated function: for the rule modules (`irdiff/diagnose/rules/*.py`) the"
        " scratch copy applies the registry's `@rule(...)` after the definition (`f = rule(...)(f)`), so the rule"
        " bodies are mutated (earlier runs of rule modules had no mutants at all). A mutant that times out counts as"
        " killed (mutmut's rule); on the shared machine under load some timeouts may be slow tests rather than"
        " hangs: each report's counts name them.",
        "",
        'A row marked "changed since the run" is a module whose functions changed after its last run (the report\'s'
        " header names them and their mutant counts): its score is for the code before that change until it is re-run.",
        "",
        "| module | killed | score | not killed | report | fast test selection | run |",
        "|---|---:|---:|---:|---|---|---|",
    ]
    (RESULTS / "README.md").write_text("\n".join(head + rows) + "\n")


def _arguments(path: Path) -> dict[tuple[str, str], str]:
    """(mutant name, diff) -> the argument written for it in an earlier report, so that a re-run keeps the
    arguments of mutants that did not change (edit the ``Argument:`` lines of the report by hand)."""
    if not path.exists():
        return {}
    pattern = re.compile(r"^### `([^`]+)` — [^\n]*\n\nArgument: ([^\n]*)\n\n```diff\n(.*?)\n```$", re.M | re.S)
    return {(m[1], m[3]): m[2] for m in pattern.finditer(path.read_text())}


def _diffs(workdir: Path, module: str, names: list[str]) -> dict[str, str]:
    """mutant name -> its unified diff (what ``mutmut show NAME`` prints), computed in this process: one
    ``mutmut show`` per mutant costs a second each. mutmut reads its configuration from the working directory."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    here = Path.cwd()
    os.chdir(workdir)
    try:
        return {n: get_diff_for_mutant(n, path=Path(module)).strip() for n in names}
    finally:
        os.chdir(here)


def _mutmut_version() -> str:
    from importlib.metadata import version

    return version("mutmut")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("module", nargs="?", help="a core module, e.g. irdiff/align.py")
    p.add_argument("--tests", nargs="+", help="pytest arguments (default: the module's selection in SELECTIONS)")
    p.add_argument("--workdir", type=Path, help="scratch project (default /tmp/irdiff-mutmut-$USER/<module>)")
    p.add_argument("--children", type=int, default=1, help="parallel mutant workers (default 1: shared machine)")
    p.add_argument("--keep", action="store_true", help="reuse the scratch project's earlier results")
    p.add_argument(
        "--survivors",
        action="store_true",
        help="re-run only the mutants the last run of this module did not kill (same selection; new tests in its files)",
    )
    p.add_argument(
        "--only", nargs="+", help="mutant name globs (e.g. 'irdiff.align.x__alike*'): a partial run of these only"
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="write the report from the scratch project's results so far, without running (e.g. after stopping a "
        "run at its time budget: mutants not reached are named as not run and left out of the score)",
    )
    p.add_argument("--list", action="store_true", help="print the modules and their test selections")
    a = p.parse_args(argv)
    if a.list or not a.module:
        for mod, sel in SELECTIONS.items():
            print(f"{mod}: {' '.join(sel)}")
        return 0
    module = a.module
    if not (ROOT / module).is_file():
        print(f"error: no such module: {module}", file=sys.stderr)
        return 2
    tests = a.tests or SELECTIONS.get(module)
    if not tests:
        print(f"error: no test selection for {module}: pass --tests", file=sys.stderr)
        return 2
    workdir = a.workdir or Path(f"/tmp/irdiff-mutmut-{os.environ.get('USER', 'user')}") / _slug(module)
    if a.report:
        status = _status_of(workdir, module)
        if a.only:
            status = {k: v for k, v in status.items() if any(fnmatch.fnmatch(k, g) for g in a.only)}
        _report(module, tests, workdir, status, 0.0, a.only, survivors=a.survivors)
        return 0
    run(module, tests, workdir, a.children, fresh=not a.keep, survivors=a.survivors, only=a.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
