"""Command line: ``irdiff SUITE --variant A --against B`` plus subcommands (list, compile, diff, show, …).

The CLI stays thin: it parses options, calls the pipeline modules (compile → normalize → align → diagnose →
render; runner beside), and turns their one-line errors into ``error: …`` on stderr with exit status 2.

Size: over 800 lines because every click command and its options live here (the CLI stays thin per command; the
work is in the packages it calls).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import wraps
from typing import Any

import click

from irdiff import __version__
from irdiff.bundle import BundleError
from irdiff.render.report import FORMATS
from irdiff.suite import SuiteError

EXIT_OK = 0
EXIT_USAGE = 2


class IrdiffError(click.ClickException):
    """A user-facing failure: printed as ``error: <message>``, exit status 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        from irdiff.textsafe import one_line

        click.echo(f"error: {one_line(self.format_message())}", err=True)


def user_errors(f: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the pipeline's one-line exceptions into :class:`IrdiffError` (no tracebacks for bad input)."""

    @wraps(f)
    def inner(*args: Any, **kwargs: Any) -> Any:
        from irdiff.compile.compat import UnsupportedTriton
        from irdiff.compile.envs import EnvError

        try:
            return f(*args, **kwargs)
        except (SuiteError, BundleError, UnsupportedTriton, EnvError, ValueError) as e:
            raise IrdiffError(str(e)) from None

    return inner


_ARGV: list[str] = []  # the arguments this invocation was given (recorded in bundles as its command)


def _command() -> list[str]:
    """The command line as the user typed it, for a bundle's manifest (``irdiff compile matmul --save B``)."""
    return ["irdiff", *_ARGV]


# click >= 8.2 raises this for a group called without a command (its help is the message); older click prints the
# help and exits 0 itself.
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


class SuiteFirstGroup(click.Group):
    """A group where an unknown first word is a suite: ``irdiff matmul …`` means ``irdiff compare matmul …``.

    Usage errors (unknown option, a value out of range) are one line, ``error: … (irdiff CMD --help)``, exit
    status 2, like every other input error, instead of click's three-line usage block. ``irdiff`` alone prints
    click's usual help (multi-line, on stderr, exit status 2, as click does for a group called without a command).
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["compare", *args]
        return super().parse_args(ctx, args)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        global _ARGV
        _ARGV = list(args) if args is not None else sys.argv[1:]
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except _NO_ARGS_IS_HELP as e:  # bare `irdiff`: click's own multi-line help on stderr, exit status 2
            e.show()
            sys.exit(e.exit_code)
        except click.UsageError as e:
            where = e.ctx.command_path if e.ctx is not None else "irdiff"
            message = " ".join(e.format_message().split())
            click.echo(f"error: {message} (see '{where} --help')", err=True)
            sys.exit(EXIT_USAGE)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        if isinstance(rv, int) and not isinstance(rv, bool):
            sys.exit(rv)
        sys.exit(EXIT_OK)


@click.group(cls=SuiteFirstGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="irdiff")
def cli() -> None:
    """Diff Triton kernel variants stage by stage and explain why they differ.

    \b
    irdiff matmul --variant annotated --against unannotated
    irdiff path/to/kernels.py::suite --variant a --against b --target sm80
    irdiff list
    """


def target_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--target",
        default=None,
        metavar="SM",
        callback=_check_target,
        help="GPU target: sm80, sm86, sm89, sm90, sm100, sm120 (default: the local GPU, else sm90).",
    )(f)


def _keep_meta(key: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """A callback storing an option's value in ``ctx.meta[key]`` (display options read where they are used)."""

    def keep(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        ctx.meta[key] = value

    return keep


def compile_options(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        target_option,
        click.option(
            "--config", "config", default=None, callback=_check_config, help="Autotune config: index or KEY=VALUE,..."
        ),
        click.option("--all-configs", is_flag=True, help="Compile every autotune config."),
        click.option(
            "--shape", "shape", default=None, callback=_check_shape, help="Problem sizes, e.g. M=4096,N=4096,K=512."
        ),
        click.option("--passes", is_flag=True, help="Also capture per-pass MLIR snapshots (MLIR_ENABLE_DUMP)."),
        click.option("--save", "save", default=None, type=click.Path(file_okay=False), help="Bundle directory."),
        click.option("--no-cache", is_flag=True, help="Recompile and re-diagnose even if irdiff has a cached result."),
        click.option(
            "-j", "--jobs", default=0, type=click.IntRange(min=0), help="Parallel compile processes (default: cores)."
        ),
        click.option(
            "-q",
            "--quiet",
            is_flag=True,
            expose_value=False,
            callback=_keep_meta("irdiff.quiet"),
            help="No compile progress on stderr (shown only on a terminal anyway).",
        ),
        click.option("--triton", "triton", default=None, metavar="VERSION", help="Compile with this Triton release (another than the installed one: in an environment irdiff creates once; see irdiff envs)."),
        click.option("--triton-path", "triton_path", default=None, metavar="DIR", help="Compile with a local Triton: a venv, its python, or a build dir holding the triton package."),
        click.option("--env", "env", multiple=True, metavar="NAME=VALUE", help="Compile environment variable (Triton knob), e.g. DISABLE_MMA_V3=1 (repeatable)."),
    ]  # fmt: skip
    for o in reversed(opts):
        f = o(f)
    return f


def against_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Settings of the --against side only (the --variant side takes --target/--triton/--env)."""
    opts = [
        click.option("--against-target", "against_target", default=None, metavar="SM", help="Target of the --against side (default: --target)."),
        click.option("--against-triton", "against_triton", default=None, metavar="VERSION", help="Triton release of the --against side."),
        click.option("--against-triton-path", "against_triton_path", default=None, metavar="DIR", help="Local Triton of the --against side."),
        click.option("--against-env", "against_env", multiple=True, metavar="NAME=VALUE", help="Compile environment variable of the --against side (repeatable)."),
    ]  # fmt: skip
    for o in reversed(opts):
        f = o(f)
    return f


def parse_env(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``("DISABLE_MMA_V3=1", ...)`` → dict. :raises ValueError: an item without ``=``."""
    out: dict[str, str] = {}
    for item in items:
        k, eq, v = item.partition("=")
        if not eq or not k.strip() or not k.strip().replace("_", "").isalnum():
            raise ValueError(f"--env {item!r}: expected NAME=VALUE")
        out[k.strip()] = v
    return out


def parse_shape(text: str | None) -> dict[str, int]:
    """``--shape M=4096,N=512`` → ``{"M": 4096, "N": 512}``.

    :raises ValueError: not ``NAME=INT`` pairs, an empty name, a size ≤ 0, or a name given twice.
    """
    if text is None:
        return {}
    if not text.strip():
        raise ValueError("--shape '': expected NAME=INT[,NAME=INT...]")
    out: dict[str, int] = {}
    for part in text.split(","):
        k, eq, v = part.partition("=")
        k, v = k.strip(), v.strip()
        if not eq or not k or not v.lstrip("-+").isdigit():
            raise ValueError(f"--shape {text!r}: expected NAME=INT[,NAME=INT...]")
        if int(v) <= 0:
            raise ValueError(f"--shape {k}={v}: sizes must be positive integers")
        if k in out:
            raise ValueError(f"--shape {text!r}: {k} is given twice")
        out[k] = int(v)
    return out


def _check_target(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--target``: one of the supported targets (``sm90``, ``sm_90a``, ``90``); an empty value is an error, not
    the default."""
    if value is None:
        return None
    from irdiff.compile import normalize_target

    try:
        return normalize_target(value)
    except SuiteError as e:
        raise IrdiffError(str(e)) from None


def _check_shape(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        parse_shape(value)
    except ValueError as e:
        raise IrdiffError(str(e)) from None
    return value


def _check_config(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--config``: an index or ``KEY=VALUE,…`` (types are checked against the suite's configs when compiling)."""
    if value is None:
        return None
    if not value.strip():
        raise IrdiffError("--config '': expected an index or KEY=VALUE[,KEY=VALUE...]")
    from irdiff.compile import parse_config_option

    try:
        parse_config_option(value)
    except ValueError as e:
        raise IrdiffError(str(e)) from None
    keys = [part.partition("=")[0].strip() for part in value.split(",")] if "=" in value else []
    twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if twice is not None:
        raise IrdiffError(f"--config {value!r}: {twice} is given twice")
    return value


def _check_name(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``--variant``/``--against``: a name, not an empty string (``--variant ''`` silently meant the default pair)."""
    for v in value if isinstance(value, tuple) else (value,):
        if v is not None and not v.strip():
            opt = param.opts[0] if param.opts else str(param.name)
            raise IrdiffError(f"{opt} {v!r}: give a variant name (irdiff list SUITE shows them)")
    return value


def check_new_dir(path: str | None, option: str) -> None:
    """A directory the user names for irdiff to create (``--save``, ``capture -o``, ``--reports``, ``sweep --out``)
    goes into one that exists: irdiff creates that directory and nothing above it the user did not ask for.

    :raises ValueError: the parent directory is missing or is not a directory.
    """
    if not path:
        return
    from pathlib import Path

    p = Path(path)
    if p.exists() or p.is_symlink():
        return  # the command itself says what is wrong with an existing path
    parent = p.parent
    if not parent.exists():
        raise ValueError(f"{option} {path}: directory {parent} does not exist (irdiff creates only {p.name})")
    if not parent.is_dir():
        raise ValueError(f"{option} {path}: {parent} is not a directory")


def _compile(req: Any, save: str | None) -> Any:
    """:func:`irdiff.compile.compile_bundle` with progress on stderr when it is a terminal (not under ``-q``)."""
    from irdiff.compile import compile_bundle
    from irdiff.render.progress import compile_progress, progress_enabled

    check_new_dir(save, "--save")
    ctx = click.get_current_context(silent=True)
    quiet = bool(ctx is not None and ctx.meta.get("irdiff.quiet"))
    with compile_progress(progress_enabled(quiet)) as progress:
        return compile_bundle(req, save, command=_command(), progress=progress, echo=_echo_err)


def _build_request(
    suite: str,
    variants: list[str],
    target: str | None,
    config: str | None,
    all_configs: bool,
    shape: str | None,
    passes: bool,
    no_cache: bool,
    jobs: int,
    triton: str | None = None,
    triton_path: str | None = None,
    env: tuple[str, ...] = (),
) -> Any:
    from irdiff.compile import CompileRequest, Side, parse_config_option, target_default

    env_vars = parse_env(env)
    return CompileRequest(
        suite=suite,
        variants=variants,
        target=(target or target_default()).lower(),
        config="all" if all_configs else parse_config_option(config),
        shape=parse_shape(shape),
        passes=passes,
        use_cache=not no_cache,
        jobs=jobs,
        triton=triton,
        triton_path=triton_path,
        sides=[Side(v, env=env_vars) for v in variants] if env_vars else [],
    )


def _echo_err(msg: str) -> None:
    click.echo(msg, err=True)


def _sides(a: str, b: str, target: str | None, triton: str | None, triton_path: str | None, env: tuple[str, ...],
           against_target: str | None, against_triton: str | None, against_triton_path: str | None,
           against_env: tuple[str, ...]) -> list[Any]:  # fmt: skip
    """The two :class:`~irdiff.compile.Side` objects of a comparison, named (``annotated@sm80``) when one variant is
    on both sides. ``--target/--triton/--triton-path/--env`` set the --variant side and are the defaults of the
    --against side; a setting a side does not get falls back to the suite variant's own, then the installed Triton
    and the default target."""
    from irdiff.compile import Side, side_names

    env_a = parse_env(env)
    other_triton = bool(against_triton or against_triton_path)
    side_a = Side(a, target=target, triton=triton, triton_path=triton_path, env=env_a)
    side_b = Side(
        b,
        target=against_target or target,
        triton=against_triton if other_triton else triton,
        triton_path=against_triton_path if other_triton else triton_path,
        env={**env_a, **parse_env(against_env)},
    )
    sides = [side_a, side_b]
    for s, n in zip(sides, side_names(sides)):
        s.name = n
    return sides


def _settings_differ(suite: Any, sides: list[Any]) -> bool:
    """The two sides compile with another target, Triton or environment (explicitly or through their variants)."""

    def key(side: Any) -> tuple[Any, ...]:
        v = suite.variant(side.variant)
        env = {**dict(v.env), **side.env}
        return (side.target or v.target, side.triton or v.triton, side.triton_path, json.dumps(env, sort_keys=True))

    return len({key(x) for x in sides}) > 1


def raw_text_only(stage: str | None) -> bool:
    """``--stage python`` alone: nothing after the source is shown, so per-pass snapshots are not worth taking."""
    return stage is not None and stage.strip().lower() == "python"


def _asked(bundle: Any, names: Sequence[str], all_configs: bool = False) -> list[Any]:
    """The variants of ``bundle`` this command asked for, in bundle order: those named ``names`` (with
    ``all_configs``, every config of them too: ``a@0``, ``a@1``, …). A bundle keeps the variants of earlier runs
    (another pair, a compile that failed back then): those never decide what a command prints or its exit status."""
    from irdiff.render.configs import split_config_name

    wanted = set(names)
    return [
        v
        for n, v in bundle.variants.items()
        if n in wanted or (all_configs and split_config_name(n)[1] is not None and split_config_name(n)[0] in wanted)
    ]


def _report_errors(bundle: Any, names: Sequence[str], all_configs: bool = False) -> int:
    """Print the compiler's message for each variant asked for (:func:`_asked`) that failed to compile; return how
    many failed.

    The compile driver's message starts with the innermost cause (``arange's range must be a power of 2``), then
    one frame per ``@jit`` level (file:line, the line, a caret): up to 40 lines are shown, keeping the first ones.
    """
    from irdiff.textsafe import clean

    failed = 0
    for v in _asked(bundle, names, all_configs):
        if v.error:
            failed += 1
            lines = clean(v.error).strip().splitlines() or [clean(v.error)]
            click.echo(f"error: variant {clean(repr(v.name))} failed to compile: {lines[0]}", err=True)
            rest = lines[1:]
            for line in rest[:39] if len(rest) > 40 else rest:
                click.echo(f"  {line}", err=True)
            if len(rest) > 40:
                from irdiff.render.words import plural

                click.echo(
                    f"  … ({plural(len(rest) - 39, 'line')} omitted; the whole message is in {v.directory}/variant.json)",
                    err=True,
                )
    return failed


@cli.command("list")
@click.argument("suites", nargs=-1, metavar="[SUITE]...")
@user_errors
def list_cmd(suites: tuple[str, ...]) -> None:
    """List suites and their variants: the built-in ones, or those named (a built-in name, ``path.py`` for every
    suite the file defines, ``path.py::name`` for one). Wrapped to the terminal's width (80 columns when piped)."""
    import shutil
    import textwrap

    from irdiff.suite import list_suites, load_suites
    from irdiff.textsafe import clean

    width = max(40, shutil.get_terminal_size((80, 24)).columns)
    found: list[tuple[str, Any]] = []
    for ref in suites:
        path_part = ref.partition("::")[0]
        for s in load_suites(ref):
            found.append((s.name if s.source_file == "" else f"{path_part}::{s.name}", s))
    if not suites:
        found = [(s.name, s) for s in list_suites()]
    for label, s in found:
        click.echo(
            textwrap.fill(
                clean(label + (f": {s.description}" if s.description else "")), width, subsequent_indent="    "
            )
        )
        name_w = max((len(n) for n in s.variants), default=0)
        for name, v in s.variants.items():
            head = clean(f"  {name:<{name_w}}  ")
            click.echo(
                textwrap.fill(clean(v.description or ""), width, initial_indent=head, subsequent_indent=" " * len(head))
                or head.rstrip()
            )


@cli.command("compile")
@click.argument("suite")
@click.option(
    "--variant", "variants", multiple=True, help="Variant to compile (repeatable; default: all).", callback=_check_name
)
@compile_options
@user_errors
def compile_cmd(
    suite: str,
    variants: tuple[str, ...],
    target: str | None,
    config: str | None,
    all_configs: bool,
    shape: str | None,
    passes: bool,
    save: str | None,
    no_cache: bool,
    jobs: int,
    triton: str | None = None,
    triton_path: str | None = None,
    env: tuple[str, ...] = (),
) -> None:
    """Compile variants of SUITE for a target and save every stage into a bundle directory."""
    from irdiff.suite import load_suite
    from irdiff.textsafe import clean

    s = load_suite(suite)
    names = list(variants) or list(s.variants)
    req = _build_request(suite, names, target, config, all_configs, shape, passes, no_cache, jobs, triton,
                         triton_path, env)  # fmt: skip
    bundle = _compile(req, save)
    # The pair `irdiff diff BUNDLE` compares: the first two --variant names in the order given, else the suite's
    # own pair (--variant / --against of the main command), never the suite's listing order.
    pair = list(dict.fromkeys(variants))[:2] if len(set(variants)) >= 2 else list(s.pair(None, None))
    if not all_configs and all(n in bundle.variants for n in pair) and bundle.pair != pair:
        bundle.pair = pair
        bundle.save()
    asked = _asked(bundle, names, all_configs)
    for v in asked:
        if v.error:
            continue
        r = v.resources
        click.echo(
            f"{clean(v.name)}: {clean(v.kernel)} {v.target or bundle.target} — {len(v.stages)} stages, {r.registers} registers, "
            f"{r.spill_store_bytes or 0} B spilled, {r.shared_bytes} B shared"
            f"{' (cached)' if v.cache_hit else f', {v.compile_seconds:.1f} s'}"
        )
    for v in asked:
        missing = v.metadata.get("missing") or []
        if missing:  # an older Triton release: say what it could not give
            version = (v.settings or {}).get("triton") or v.metadata.get("triton_version") or "?"
            click.echo(f"note: {v.name}: Triton {version} lacks: {'; '.join(map(str, missing))}", err=True)
    click.echo(f"bundle: {bundle.directory}")
    if _report_errors(bundle, names, all_configs):
        sys.exit(1)


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Runner options (irdiff/run): shapes, autotune, CUDA graphs, interpreter."""
    opts = [
        click.option(
            "--shapes",
            "shapes",
            multiple=True,
            metavar="SPEC",
            help="Shapes to time: 256:4096:256, 512,1024 (bare values set every dimension), K=512,2048, "
            "M=N=8192; repeat for a product.",
        ),
        click.option("--autotune", is_flag=True, help="Run Triton's autotuner per variant and shape; time winners."),
        click.option("--graph", is_flag=True, help="Time CUDA-graph replays (for tiny kernels; L2 not flushed)."),
        click.option("--interpret", is_flag=True, help="Check correctness on the CPU through Triton's interpreter."),
        click.option(
            "--ncu",
            is_flag=True,
            help="Profile one launch per variant with Nsight Compute (--clock-control none) and join the counters "
            "to the static findings.",
        ),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _run_step(bundle: Any, suite: str, variants: list[str], shape: str | None, config: str | None,
              shapes: tuple[str, ...], autotune: bool, graph: bool, interpret: bool, target: str | None,
              save: str | None = None, standalone: bool = False, ncu: bool = False) -> int:  # fmt: skip
    """Call the runner (irdiff/run/command.py) and turn its failures into one-line errors."""
    from irdiff.compile import parse_config_option
    from irdiff.run.command import RunOptions, run_after_compile, run_standalone

    opts = RunOptions(
        suite=suite,
        variants=variants,
        shape=parse_shape(shape),
        shapes=list(shapes),
        config=parse_config_option(config),
        autotune=autotune,
        graph=graph,
        interpret=interpret,
        target=target,
        ncu=ncu,
    )
    try:
        if standalone:
            return run_standalone(opts, save, click.echo, _command())
        return run_after_compile(bundle, opts, click.echo)
    except RuntimeError as e:
        if standalone:
            raise IrdiffError(str(e)) from None
        # the comparison still has every static finding to show: report the runner's failure, exit 1 at the end
        click.echo(f"error: the run failed: {e}", err=True)
        return 1


def _check_stages(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Reject unknown ``--stage`` names before anything is compiled (one-line error, exit 2)."""
    from irdiff.pipeline import parse_stages

    try:
        parse_stages(value)
    except ValueError as e:
        raise IrdiffError(str(e)) from None
    return value


def _keep_theme(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    ctx.meta["irdiff.theme"] = value or "auto"


def _theme(color: bool) -> str:
    """The palette for this command's ``--theme`` (asks the terminal only when colour is on)."""
    from irdiff.render.terminal import choose_theme

    ctx = click.get_current_context(silent=True)
    choice = str(ctx.meta.get("irdiff.theme", "auto")) if ctx is not None else "auto"
    return choose_theme(choice, query=color) if color else "dark"


def output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Terminal output options (irdiff/render/terminal.py): colour and pager."""
    opts = [
        click.option("--color", "color", type=click.Choice(["auto", "always", "never"]), default="auto", envvar="IRDIFF_COLOR", show_default=True, help="Colour (auto: on a terminal, off under NO_COLOR)."),
        click.option("--paging", "paging", type=click.Choice(["auto", "always", "never"]), default="auto", envvar="IRDIFF_PAGING", show_default=True, help="Page long output (IRDIFF_PAGER, PAGER, less)."),
        click.option("--theme", type=click.Choice(["auto", "dark", "light", "mono"]), default="auto", envvar="IRDIFF_THEME", show_default=True, expose_value=False, callback=_keep_theme, help="Palette (auto: COLORFGBG, else ask the terminal for its background; mono: bold and reverse only)."),
    ]  # fmt: skip
    for o in reversed(opts):
        f = o(f)
    return f


def render_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Diff display options (irdiff/render/terminal.py), plus :func:`output_options`."""
    opts: list[Callable[..., Any]] = [
        click.option("--stage", "stage", default=None, metavar="LIST", callback=_check_stages, help="Stages whose hunks to show, e.g. ttgir,ptx, or all (default: python,ttir,ttgir; the summary and findings always cover every stage)."),
        click.option("--context", "context", default=3, type=click.IntRange(min=0), show_default=True, help="Context lines."),
        click.option("--raw", is_flag=True, help="Diff the raw stage texts (no normalization)."),
        click.option("--side-by-side", "-s", "side_by_side", is_flag=True, help="Two columns, fitted to the terminal width."),
        click.option("--width", "width", default=None, type=click.IntRange(min=60), help="Columns to lay out for (default: terminal)."),
        click.option("--stage0", type=click.Choice(["diff", "full"]), default="diff", show_default=True, expose_value=False, callback=_keep_meta("irdiff.stage0"), help="Stage-0 table: rows that differ, the rest folded into one line (diff), or every row (full)."),
        output_options,
    ]  # fmt: skip
    for o in reversed(opts):
        f = o(f)
    return f


def default_hunk_stages() -> tuple[str, ...]:
    """Stages whose hunks the terminal shows by default (``Stage.shown_by_default`` in :mod:`irdiff.stages`: Python,
    TTIR, TTGIR); LLIR, PTX and SASS are summarized (counts, findings) and shown on request (--stage all, --stage
    ptx): their diffs run to thousands of lines."""
    from irdiff import stages

    return tuple(s.name for s in stages.text_stages() if s.shown_by_default)


def _say_chosen_pair(command: str, path: str, bundle: Any, variant: str | None, against: str | None, a: str,
                     b: str) -> str:  # fmt: skip
    """For one bundle whose pair the user did not name in full: one line on stderr saying which pair ``irdiff
    COMMAND`` shows, how it was chosen and what else the bundle holds; returns the short label of how
    (:data:`irdiff.pipeline.PAIR_CHOICES`), ``""`` when the user named both sides."""
    from irdiff.pipeline import PAIR_CHOICES, bundle_pair
    from irdiff.textsafe import clean

    how = bundle_pair(bundle, variant, against)[2]
    if not how:
        return ""
    sentence, label = PAIR_CHOICES[how]
    n = len(bundle.variants)
    held = f" (it holds {n}: {', '.join(bundle.variants)})" if n > 2 else ""
    click.echo(
        clean(f"irdiff {command}: {path}: {a} (-) vs {b} (+), {sentence}{held}; choose with --variant/--against"),
        err=True,
    )
    return label


def _terminal_output(bundle: Any, a: str, b: str, stage: str | None, context: int, raw: bool, side_by_side: bool,
                     width: int | None, color: str, cache: bool = True, sides: tuple[str, str] | None = None,
                     title: str | None = None) -> tuple[Any, str | None, Any]:  # fmt: skip
    """How :func:`_show_comparison` renders (its :class:`TerminalOptions`), the output cache's key of that output
    (None under ``--no-cache``) and the output when that cache holds it (:func:`irdiff.pipeline.cached_output`)."""
    from dataclasses import asdict

    from irdiff.compile import cache_dir
    from irdiff.render.terminal import TerminalOptions, color_enabled, terminal_width

    on = color_enabled(color)
    ctx = click.get_current_context(silent=True)
    opts = TerminalOptions(
        color=on,
        theme=_theme(on),
        stage0_full=ctx is not None and ctx.meta.get("irdiff.stage0") == "full",
        width=terminal_width(width),
        side_by_side=side_by_side,
        show_spec=True,
        hunk_stages=default_hunk_stages() if stage is None else None,
        sides=sides,
        token_cache=str(cache_dir() / "tokens") if cache and on else None,
        title=title,
    )
    if not cache:
        return opts, None, None
    from irdiff.pipeline import cached_output, output_key

    key = output_key(bundle, a, b, stage, raw, context, {"renderer": "terminal", **asdict(opts)})
    return opts, key, cached_output(key, on)


def _show_comparison(bundle: Any, a: str, b: str, stage: str | None, context: int, raw: bool, side_by_side: bool,
                     width: int | None, color: str, paging: str, cache: bool = True,
                     sides: tuple[str, str] | None = None, title: str | None = None,
                     known: Any = None, output: tuple[Any, str | None, Any] | None = None) -> None:  # fmt: skip
    """Normalize, align, diagnose and print the comparison (summary, findings, stage 0, hunks); ``cache=False``
    (``--no-cache``) computes it afresh instead of reading :mod:`irdiff.comparison_cache`. ``sides``: where each
    side came from as the user gave it, ``title``: the header's first words (:class:`TerminalOptions`);
    ``known``: the same comparison, already read from that cache (:func:`irdiff.pipeline.cached_comparison`);
    ``output``: :func:`_terminal_output` of this very call, already made. A repeated command prints the output it
    printed before (the comparison cache's outputs: nothing decoded or rendered)."""
    from irdiff.pipeline import build_comparison, parse_stages, store_output
    from irdiff.render.terminal import emit, render

    opts, key, shown = output or _terminal_output(bundle, a, b, stage, context, raw, side_by_side, width, color,
                                                  cache, sides, title)  # fmt: skip
    if shown is not None:
        emit(shown.text, paging=paging)
        return
    comparison = known or build_comparison(
        bundle, a, b, stages=parse_stages(stage), raw=raw, context=context, cache=cache
    )
    text = render(comparison, opts)
    if key is not None and comparison.diagnosis_error is None:
        store_output(key, comparison, text)
    emit(text, paging=paging)


def report_file_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Report files, one option per output format (``irdiff.render.report.FORMATS``: ``--html``, ``--md``,
    ``--json-report``; the value reaches the command as ``<format>_out``); ``-`` writes to stdout."""

    opts = [
        *(
            click.option(fmt.option, f"{fmt.name}_out", default=None, metavar="FILE", help=fmt.help)
            for fmt in FORMATS.values()
        ),
        click.option("--force", is_flag=True, help="Overwrite report files that irdiff did not write."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _report_outputs(files: dict[str, str | None], force: bool) -> list[tuple[str, str]]:
    """``[(format, path)]`` asked for (``files``: the ``<format>_out`` options); refuses (one-line error) paths that
    would overwrite a user's file."""
    from irdiff.render.report import check_outputs

    outputs = [(name, p) for name in FORMATS if (p := files.get(f"{name}_out"))]
    if sum(p == "-" for _, p in outputs) > 1:
        raise ValueError("only one report can go to stdout ('-')")
    check_outputs([p for _, p in outputs], force=force)
    return outputs


def _write_reports(bundle: Any, a: str, b: str, stage: str | None, context: int, raw: bool,
                   outputs: list[tuple[str, str]], force: bool, cache: bool = True) -> None:  # fmt: skip
    import datetime as _dt

    from irdiff.pipeline import build_comparison, parse_stages
    from irdiff.render.report import write_reports

    comparison = build_comparison(bundle, a, b, stages=parse_stages(stage), raw=raw, context=context, cache=cache)
    # the run writing the report, beside the bundle's command/created (the run that compiled it)
    comparison.report_command = _command()
    comparison.report_created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    for path in write_reports(comparison, outputs, force=force):
        click.echo(f"report: {path}", err=True)


def _check_shapes(shapes: tuple[str, ...], suite_shape: Mapping[str, Any], shape: str | None) -> None:
    """Check ``--shapes`` before anything is compiled, also when nothing will be timed (no GPU, ``--no-run``).

    :raises ValueError: a malformed spec or a dimension the suite's shape (updated by ``--shape``) does not have
        (:func:`irdiff.run.sweep.parse_shapes`).
    """
    if not shapes:
        return
    from irdiff.run.sweep import parse_shapes

    parse_shapes(shapes, {**suite_shape, **parse_shape(shape)})


def _config_from_names(variant: str | None, against: str | None, config: str | None) -> tuple[Any, Any, Any]:
    """``--variant annotated@3`` (a bundle's name for config 3 of ``annotated``) → ``annotated`` and ``--config 3``.

    :raises ValueError: the two names, or a name and ``--config``, ask for different configs.
    """
    from irdiff.render.configs import split_config_name

    picked: set[int] = set()
    names: list[str | None] = []
    given: list[str] = []  # the options that name a config, as typed
    for opt, n in (("--variant", variant), ("--against", against)):
        if n is None:
            names.append(None)
            continue
        base, idx = split_config_name(n)
        names.append(base)
        if idx is not None:
            picked.add(idx)
            given.append(f"{opt} {n}")
    if config is not None:
        given.append(f"--config {config}")
    if len(picked) > 1 or (picked and config is not None and config.strip() != str(next(iter(picked)))):
        raise ValueError(
            f"{' and '.join(given)} name different configs: both sides compile the same config "
            "(every config side by side: --all-configs)"
        )
    return names[0], names[1], str(picked.pop()) if picked else config


def _all_configs_table(bundle: Any, a: str, b: str, config: str | None, width: int | None,
                       jobs: int = 0) -> tuple[str, str]:  # fmt: skip
    """Print the ``--all-configs`` table (irdiff/render/configs.py) and return the bundle names of the pair to show:
    ``--config N`` if given, else the config whose variants differ most. The configs are diagnosed on the sweep's
    local executor (``-j`` processes, default: cores; :mod:`irdiff.sweep.executors`) when there are 4 or more."""
    from irdiff.render.configs import config_indices, config_legend, config_rows, most_different, render_config_table
    from irdiff.render.terminal import terminal_width
    from irdiff.sweep.executors import LocalExecutor

    executor = LocalExecutor(jobs) if jobs != 1 and len(config_indices(bundle, a, b)) >= 4 else None
    try:
        rows = config_rows(bundle, a, b, executor=executor if executor and executor.workers > 1 else None)
    finally:
        if executor is not None:
            executor.close()
    if not rows:
        raise ValueError(f"--all-configs: suite {bundle.suite!r} compiled no configs for {a} and {b}")
    chosen = None
    if config is not None:
        if not config.strip().isdigit():
            raise ValueError(f"--all-configs --config {config!r}: name the config to show by its index")
        chosen = next((r for r in rows if r.index == int(config)), None)
        if chosen is None:
            raise ValueError(f"--config {config}: configs are {rows[0].index}..{rows[-1].index}")
    else:
        chosen = most_different(rows)
    if chosen is None:
        raise ValueError(f"--all-configs: every config of {a} or {b} failed to compile")
    w = terminal_width(width)
    click.echo(f"irdiff {bundle.suite}  {a} vs {b}  ·  {bundle.target}  ·  {len(rows)} autotune configs")
    click.echo(f"  {config_legend(bundle, rows)}")
    click.echo(render_config_table(rows, a, b, chosen.index, w), nl=False)
    why = "picked with --config" if config is not None else "the config that differs most; pick another with --config N"
    click.echo(f"\nfull comparison: config {chosen.index} ({why})\n")
    return chosen.a, chosen.b


@cli.command("compare")
@click.argument("suite")
@click.option(
    "--variant", "variant", default=None, help="Variant to inspect (default: the suite's pair).", callback=_check_name
)
@click.option(
    "--against",
    "against",
    default=None,
    callback=_check_name,
    help="Variant to compare with (default with an --against-* setting: the same variant).",
)
@compile_options
@against_options
@run_options
@click.option("--no-run", is_flag=True, help="Do not time the variants even where a GPU is present.")
@click.option("--json", "as_json", is_flag=True, help="Print the diagnosis (findings, evidence, facts) as JSON.")
@click.option(
    "--explain", "explain_id", default=None, metavar="FINDING_ID", help="Show one finding's chain and evidence."
)
@render_options
@report_file_options
@user_errors
def compare_cmd(
    suite: str,
    variant: str | None,
    against: str | None,
    target: str | None,
    config: str | None,
    all_configs: bool,
    shape: str | None,
    passes: bool,
    save: str | None,
    no_cache: bool,
    jobs: int,
    triton: str | None = None,
    triton_path: str | None = None,
    env: tuple[str, ...] = (),
    against_target: str | None = None,
    against_triton: str | None = None,
    against_triton_path: str | None = None,
    against_env: tuple[str, ...] = (),
    shapes: tuple[str, ...] = (),
    autotune: bool = False,
    graph: bool = False,
    interpret: bool = False,
    ncu: bool = False,
    no_run: bool = False,
    as_json: bool = False,
    explain_id: str | None = None,
    stage: str | None = None,
    context: int = 3,
    raw: bool = False,
    side_by_side: bool = False,
    width: int | None = None,
    color: str = "auto",
    paging: str = "auto",
    force: bool = False,
    **report_files: str | None,
) -> None:
    """Compile two variants of SUITE and show what differs, stage by stage, and why."""
    from irdiff.compile import suite_summary, validation_memo

    outputs = _report_outputs(report_files, force)
    s = suite_summary(suite)  # every variant cached and no file changed: Triton is not imported
    variant, against, config = _config_from_names(variant, against, config)
    _check_shapes(shapes, s.shape, shape)
    other_side = bool(against_target or against_triton or against_triton_path or against_env)
    sides = (
        "--variant" if variant else "the suite's default pair",
        "--against" if against else "the same variant" if other_side else "the suite's default pair",
    )
    if other_side and against is None:
        against = variant or s.pair(None, None)[0]  # the same variant under other settings
    a, b = s.pair(variant, against)
    req = _build_request(suite, [a, b], target, config, all_configs, shape, passes, no_cache, jobs, triton,
                         triton_path, env)  # fmt: skip
    req.sides = _sides(a, b, target, triton, triton_path, env, against_target, against_triton, against_triton_path,
                       against_env)  # fmt: skip
    if a == b and len({json.dumps(vars(x), sort_keys=True) for x in req.sides}) < 2:
        req.sides = req.sides[:1]  # one variant, one set of settings: compiled once, reported identical
    elif _settings_differ(s, req.sides) and not raw_text_only(stage):
        req.passes = True  # the settings finding names the first pass whose output differs
    bundle = _compile(req, save)
    a, b = req.sides[0].name, req.sides[-1].name
    if all_configs:
        # Every config compiled (variants a@0, a@1, …): the per-config table, then the chosen config's comparison.
        a, b = _all_configs_table(bundle, a, b, config, width, jobs)
        no_run = True  # the runner times one config; run it with --config N
    if bundle.pair != [a, b]:  # a repeated command leaves the bundle as it is (nothing is rewritten)
        bundle.pair = [a, b]
        bundle.save(validation_memo())
    known = None  # the comparison as the comparison cache holds it (a warm run: nothing normalized or aligned)
    output = None  # the output as the output cache holds it (a repeated command: nothing decoded or rendered)
    asked = [a, b] if not all_configs else [req.sides[0].name, req.sides[-1].name]
    if not passes and not any(v.error for v in _asked(bundle, asked, all_configs)):
        from irdiff.diagnose.passes import needs_pass_trace
        from irdiff.pipeline import cached_comparison, parse_stages

        if no_run and not (no_cache or outputs or as_json or explain_id):  # the terminal output is all it prints
            output = _terminal_output(bundle, a, b, stage, context, raw, side_by_side, width, color, sides=sides)
        if output is not None and output[2] is not None:
            ttir_identical = output[2].ttir_identical  # as in the comparison it was rendered from
        else:
            known = None if no_cache else cached_comparison(bundle, a, b, parse_stages(stage), raw, context)
            ttir = next((d for d in known.stage_diffs if d.stage == "ttir"), None) if known and not raw else None
            ttir_identical = None if ttir is None else ttir.identical
        if needs_pass_trace(bundle.variants[a], bundle.variants[b], ttir_identical):
            click.echo("irdiff: TTIR is identical; compiling again with per-pass snapshots (--passes)", err=True)
            req = _build_request(suite, [a, b], target, config, all_configs, shape, True, no_cache, jobs)
            bundle = _compile(req, save)
            bundle.pair = [a, b]
            bundle.save(validation_memo())
            known = output = None
    _report_errors(bundle, asked, all_configs)
    run_status = 0
    if not no_run:
        import contextlib

        with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
            run_status = _run_step(
                bundle, suite, [a, b], shape, config, shapes, autotune, graph, interpret, bundle.target, ncu=ncu
            )
    if any(v.error for v in _asked(bundle, asked, all_configs)):
        sys.exit(1)  # its compiler message is printed above; no report, JSON or comparison of a failed variant
    if outputs:
        _write_reports(bundle, a, b, stage, context, raw, outputs, force, cache=not no_cache)
        if any(p == "-" for _, p in outputs):
            sys.exit(1 if run_status else 0)
    if as_json or explain_id:
        from irdiff.render.diagnosis import diagnosis_output

        click.echo(diagnosis_output(bundle, a, b, as_json=as_json, explain_id=explain_id))
        sys.exit(1 if run_status else 0)
    if not no_run:
        known = None  # the timings joined the bundle: its comparison is looked up again
    _show_comparison(bundle, a, b, stage, context, raw, side_by_side, width, color, paging, cache=not no_cache,
                     sides=sides, known=known, output=output)  # fmt: skip
    if run_status:
        sys.exit(1)


@cli.command("diff")
@click.argument("path_a", metavar="BUNDLE_OR_VARIANT_DIR", type=click.Path())
@click.argument("path_b", metavar="[BUNDLE_OR_VARIANT_DIR]", required=False, type=click.Path())
@click.option("--variant", "variant", default=None, help="Variant to inspect (in a bundle).", callback=_check_name)
@click.option(
    "--against",
    "against",
    default=None,
    help="Variant to compare with (in the second bundle, or the same).",
    callback=_check_name,
)
@click.option(
    "--kernel", "kernel", default=None, metavar="REGEX", help="Two captures: only pairs whose kernel matches."
)
@click.option("--overview", "overview", is_flag=True, help="Two captures: print only the overview table.")
@click.option(
    "--top",
    "top",
    default=None,
    type=click.IntRange(min=1),
    metavar="N",
    help="Two captures: list and detail only the N most severe pairs that differ.",
)
@click.option(
    "--reports",
    "reports",
    default=None,
    metavar="DIR",
    help="Two captures: write HTML/Markdown/JSON reports of each pair that differs, and index.md.",
)
@click.option(
    "--force-reports", "force_reports", is_flag=True, help="Overwrite files in --reports DIR that irdiff did not write."
)
@render_options
@user_errors
def diff_cmd(path_a: str, path_b: str | None, variant: str | None, against: str | None, stage: str | None,
             context: int, raw: bool, side_by_side: bool, width: int | None, color: str, paging: str,
             kernel: str | None = None, overview: bool = False, top: int | None = None,
             reports: str | None = None, force_reports: bool = False) -> None:  # fmt: skip
    """Diff saved results: one bundle (--variant/--against), two variant directories, or two bundles.

    Two kernel collections — `irdiff capture` directories, Triton cache entries or roots (~/.triton/cache),
    TRITON_KERNEL_DUMP directories — are paired kernel by kernel: an overview table, then each pair that differs.

    \b
    irdiff diff BUNDLE --variant annotated --against unannotated
    irdiff diff BUNDLE/annotated BUNDLE/unannotated
    irdiff diff BUNDLE_TRITON36 BUNDLE_TRITON39 --variant annotated
    irdiff diff CAPTURE_BEFORE CAPTURE_AFTER [--kernel REGEX] [--overview] [--top N]
    """
    from irdiff.pipeline import load_pair

    if path_b is not None:
        from irdiff.collections_diff.compare import mixed_inputs_error

        mismatch = mixed_inputs_error(path_a, path_b)
        if mismatch is not None:
            raise ValueError(mismatch)
    check_new_dir(reports, "--reports")
    if path_b is not None and variant is None and against is None:
        from irdiff.collections_diff.compare import is_collection, show_collection_diff

        if is_collection(path_a) or is_collection(path_b):
            from irdiff.pipeline import parse_stages
            from irdiff.render.terminal import color_enabled

            ctx = click.get_current_context(silent=True)
            show_collection_diff(path_a, path_b, kernel=kernel, overview_only=overview, stages=parse_stages(stage),
                                 context=context, raw=raw, side_by_side=side_by_side, width=width, color=color,
                                 paging=paging, reports=reports, force=force_reports, top=top,
                                 theme=_theme(color_enabled(color)),
                                 stage0_full=ctx is not None and ctx.meta.get("irdiff.stage0") == "full")  # fmt: skip
            return

    bundle, a, b = load_pair(path_a, path_b, variant, against)
    if path_b is None:
        label = _say_chosen_pair("diff", path_a, bundle, variant, against, a, b)
        sides = ("--variant" if variant else label, "--against" if against else label)
    else:
        sides = (path_a, path_b)
    _show_comparison(
        bundle, a, b, stage, context, raw, side_by_side, width, color, paging,
        sides=sides, title=f"irdiff diff · {bundle.suite}" if bundle.suite else "irdiff diff",
    )  # fmt: skip


@cli.command("show")
@click.argument("suite")
@click.option(
    "--variant",
    "variant",
    default=None,
    help="Variant to show (default: the suite's first of its pair).",
    callback=_check_name,
)
@click.option("--stage", "stage", default="ttgir", show_default=True, help="Stage or log (ptx, sass, ptxas, ...).")
@click.option("--normalized", is_flag=True, help="Show the normalized form the differ compares.")
@click.option("-n", "--line-numbers", "line_numbers", is_flag=True, help="Number the lines.")
@compile_options
@output_options
@user_errors
def show_cmd(suite: str, variant: str | None, stage: str, normalized: bool, line_numbers: bool, target: str | None,
             config: str | None, all_configs: bool, shape: str | None, passes: bool, save: str | None, no_cache: bool,
             jobs: int, color: str, paging: str, triton: str | None = None, triton_path: str | None = None,
             env: tuple[str, ...] = ()) -> None:  # fmt: skip
    """Print one stage of one variant of SUITE, coloured (compiles it if needed; SUITE may be a bundle directory)."""
    from pathlib import Path

    from irdiff.bundle import LOG_FILES, STAGES, load_bundle
    from irdiff.render.terminal import color_enabled, emit, render_stage_text

    stage = stage.strip().lower()
    if stage not in STAGES and stage not in LOG_FILES:
        raise ValueError(f"unknown stage {stage!r} (choose from {', '.join([*STAGES, *LOG_FILES])})")
    if (Path(suite) / "manifest.json").is_file():
        bundle = load_bundle(suite)
        name = variant or (bundle.pair[0] if bundle.pair else next(iter(bundle.variants), ""))
    else:
        from irdiff.suite import load_suite

        s = load_suite(suite)
        name = variant or s.pair(None, None)[0]
        req = _build_request(suite, [name], target, config, all_configs, shape, passes, no_cache, jobs, triton,
                             triton_path, env)  # fmt: skip
        bundle = _compile(req, save)
        if _report_errors(bundle, [name]):
            sys.exit(1)
    v = bundle.variants.get(name)
    if v is None:
        raise ValueError(f"no variant {name!r} (have: {', '.join(bundle.variants)})")
    text = v.text(stage)
    if not text:
        raise ValueError(f"variant {name!r} has no {stage} output in {v.directory}")
    if normalized:
        from irdiff.normalize import normalize

        text = "\n".join(normalize(stage, text, v.kernel or None).lines) + "\n"
    on = color_enabled(color)
    emit(render_stage_text(stage, text, color=on, line_numbers=line_numbers, theme=_theme(on)), paging=paging)


@cli.command("run")
@click.argument("suite")
@click.option(
    "--variant", "variant", default=None, help="Variant to time (default: the suite's pair).", callback=_check_name
)
@click.option("--against", "against", default=None, help="Variant to time beside it.", callback=_check_name)
@click.option(
    "--shape", "shape", default=None, callback=_check_shape, help="Base problem sizes, e.g. M=4096,N=4096,K=512."
)
@click.option(
    "--config", "config", default=None, callback=_check_config, help="Autotune config: index or KEY=VALUE,..."
)
@click.option(
    "--target",
    default=None,
    metavar="SM",
    callback=_check_target,
    help="Target for per-target values under --interpret (sm90).",
)
@click.option("--save", "save", default=None, type=click.Path(file_okay=False), help="Bundle to store the run in.")
@run_options
@user_errors
def run_cmd(
    suite: str,
    variant: str | None,
    against: str | None,
    shape: str | None,
    config: str | None,
    target: str | None,
    save: str | None,
    shapes: tuple[str, ...],
    autotune: bool,
    graph: bool,
    interpret: bool,
    ncu: bool,
) -> None:
    """Check and time two variants of SUITE on the local GPU (or check them under --interpret), without a diff.

    Exit status 1 when a variant's result is wrong or it fails to run (the timings are still printed).
    """
    from irdiff.suite import load_suite

    loaded = load_suite(suite)
    a, b = loaded.pair(variant, against)
    _check_shapes(shapes, loaded.shape, shape)
    status = _run_step(None, suite, [a, b], shape, config, shapes, autotune, graph, interpret, target, save, True, ncu)
    sys.exit(status)


_PROGRAM_ENV: dict[str, str] | None = None  # os.environ as irdiff was started with (set by main)


@cli.command("capture", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("-o", "--output", "output", required=True, type=click.Path(file_okay=False), help="Capture directory.")
@click.option("--filter", "filter_", default=None, metavar="REGEX", help="Record only kernels whose name matches.")
@click.option(
    "--target",
    default=None,
    metavar="SM",
    callback=_check_target,
    help="No GPU: compile for this target (sm80 … sm120) with a stand-in driver; kernels can be warmed up, not launched.",
)
@click.option(
    "--launches",
    default=8,
    show_default=True,
    type=click.IntRange(min=0),
    help="Launches sampled per kernel (grid, argument shapes); 0: no launch hook.",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Recompile every kernel afterwards for the compiler's reasoning log (default: `irdiff diff` does it on "
    "demand, for the kernels of pairs that differ).",
)
@click.option(
    "--sass",
    is_flag=True,
    help="Disassemble every kernel's SASS afterwards (default: on demand, for pairs whose PTX differs).",
)
@click.option("--no-explain", is_flag=True, hidden=True, help="Kept for compatibility: the default now.")
@click.option("--force", is_flag=True, help="Replace an earlier capture in the output directory.")
@click.option(
    "-j",
    "--jobs",
    default=0,
    type=click.IntRange(min=0),
    help="Parallel processes for the after-run step (default: cores).",
)
@click.argument("program", nargs=-1, required=True, type=click.UNPROCESSED)
@user_errors
def capture_cmd(output: str, filter_: str | None, target: str | None, launches: int, explain: bool, sass: bool,
                no_explain: bool, force: bool, jobs: int, program: tuple[str, ...]) -> None:  # fmt: skip
    """Run PROGRAM unchanged and record every Triton kernel it compiles into a bundle directory.

    The program's output and exit status are its own; irdiff's summary goes to stderr.

    \b
    irdiff capture -o before -- python train.py --steps 10
    irdiff capture -o after --filter 'rmsnorm|matmul' -- torchrun --nproc-per-node 2 train.py
    irdiff capture --target sm90 -o warm -- python warmup_only.py
    irdiff diff before after
    """
    from irdiff.capture import run_capture
    from irdiff.capture.run import misplaced_options

    own, hint = misplaced_options(list(program))
    if own and hint:
        raise ValueError(hint)
    check_new_dir(output, "-o")
    r = run_capture(list(program), output, filter=filter_, target=target, launches=launches, force=force,
                    explain=explain and not no_explain, sass=sass, jobs=jobs, env=_PROGRAM_ENV)  # fmt: skip
    from irdiff.render.words import plural

    skipped = f", {len(r.skipped)} left out by --filter" if r.skipped else ""
    click.echo(
        f"irdiff capture: {plural(len(r.kernels), 'kernel')}{skipped} in {r.directory} "
        f"(program {r.program_seconds:.1f} s, exit status {r.exit_code}; after-run step {r.finalize_seconds:.1f} s)",
        err=True,
    )
    for w in r.warnings:
        click.echo(f"irdiff capture: warning: {w}", err=True)
    if own and not r.kernels:
        click.echo(
            f"irdiff capture: warning: {', '.join(own)} after `--` went to the program, not to irdiff capture; "
            "irdiff's own options go before `--`",
            err=True,
        )
    sys.exit(r.exit_code)


@cli.command("report")
@click.argument("bundle_dir", metavar="BUNDLE_OR_VARIANT_DIR", type=click.Path())
@click.argument("other_dir", metavar="[BUNDLE_OR_VARIANT_DIR]", required=False, type=click.Path())
@click.option(
    "-o", "--output", "output", required=True, metavar="FILE", help="Report file (.html, .md, .json; - = stdout)."
)
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default=None, help="Default: from FILE's extension.")
@click.option(
    "--variant", "variant", default=None, help="Variant to inspect (default: the bundle's pair).", callback=_check_name
)
@click.option("--against", "against", default=None, help="Variant to compare with.", callback=_check_name)
@click.option(
    "--stage", "stage", default=None, metavar="LIST", callback=_check_stages, help="Stages to include (default: all)."
)
@click.option("--context", "context", default=3, type=click.IntRange(min=0), show_default=True, help="Context lines.")
@click.option("--raw", is_flag=True, help="Diff the raw stage texts (no normalization).")
@click.option("--force", is_flag=True, help="Overwrite FILE even if irdiff did not write it.")
@user_errors
def report_cmd(bundle_dir: str, other_dir: str | None, output: str, fmt: str | None, variant: str | None,
               against: str | None, stage: str | None, context: int, raw: bool, force: bool) -> None:  # fmt: skip
    """Write a report (HTML, Markdown or JSON) for saved results, without compiling anything; the saved results are
    given as for irdiff diff (one bundle, two variant directories, or two bundles).

    \b
    irdiff report BUNDLE -o report.html
    irdiff report BUNDLE -o summary.md --variant annotated --against unannotated
    irdiff report BUNDLE_TRITON36 BUNDLE_TRITON39 --variant annotated -o versions.html
    """
    from irdiff.pipeline import load_pair
    from irdiff.render.report import check_outputs, format_for

    outputs = [(format_for(output, fmt or ("html" if output == "-" else None)), output)]
    check_outputs([output], force=force)
    bundle, a, b = load_pair(bundle_dir, other_dir, variant, against)
    if other_dir is None:
        _say_chosen_pair("report", bundle_dir, bundle, variant, against, a, b)
    _write_reports(bundle, a, b, stage, context, raw, outputs, force)


@cli.command("envs")
@click.option("--prune", is_flag=True, help="Remove incomplete environments (and with --all every one not kept).")
@click.option("--all", "prune_all", is_flag=True, help="With --prune: remove complete environments too.")
@click.option("--keep", "keep", multiple=True, metavar="VERSION", help="With --prune --all: keep this release.")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@user_errors
def envs_cmd(prune: bool, prune_all: bool, keep: tuple[str, ...], as_json: bool) -> None:
    """List (or prune) the per-release Triton environments irdiff created under its cache directory."""
    from irdiff.compile.envs import current_env, envs_root, list_envs, prune_envs

    if keep and not (prune and prune_all):
        raise IrdiffError("--keep only applies with --prune --all")
    if prune:
        for e in prune_envs(list(keep), everything=prune_all):
            click.echo(f"removed Triton {e.version} ({e.bytes / 2**20:.0f} MiB) {e.path}")
    envs = list_envs()
    if as_json:
        click.echo(json.dumps([e.to_json() for e in envs], indent=1))
        return
    cur = current_env()
    click.echo(f"installed: Triton {cur.version or 'none'} ({cur.python})")
    click.echo(f"environments in {envs_root()}:" if envs else f"no environments in {envs_root()}")
    for e in envs:
        state = "" if e.complete else "  (incomplete: irdiff envs --prune removes it)"
        click.echo(f"  triton {e.version:<10} {e.bytes / 2**20:8.0f} MiB  {e.created or '?':<20} {e.path}{state}")
    if envs:
        click.echo(
            f"  total {sum(e.bytes for e in envs) / 2**20:.0f} MiB (files hard-linked to uv's cache counted here)"
        )


@cli.command("bisect")
@click.argument("suite")
@click.option(
    "--variant",
    "variant",
    default=None,
    help="Variant whose fact is tracked (default: the suite's first).",
    callback=_check_name,
)
@click.option("--good", "good", required=True, metavar="VERSION", help="A release where the fact does not hold.")
@click.option("--bad", "bad", required=True, metavar="VERSION", help="A later release where it holds.")
@click.option(
    "--fact",
    "fact_text",
    required=True,
    metavar="EXPR",
    help="e.g. 'spec.stride_ak.type!=constexpr', 'ptxas.shared>2048', 'ptx.cp.async==0', compile.failed, finding:ID.",
)
@click.option(
    "--against",
    "against",
    default=None,
    callback=_check_name,
    help="With finding:ID: the variant diagnosed against (default: the suite's other).",
)
@click.option("--pre", is_flag=True, help="Include pre-releases and dev builds the index offers.")
@click.option("--target", default=None, metavar="SM", help="GPU target (default: the local GPU, else sm90).")
@click.option("--shape", "shape", default=None, help="Problem sizes, e.g. M=4096,N=4096,K=512.")
@click.option("--config", "config", default=None, help="Autotune config: index or KEY=VALUE,...")
@click.option(
    "--save",
    "save",
    default=None,
    type=click.Path(file_okay=False),
    help="Bundle directory (one for every release tried).",
)
@click.option(
    "--releases",
    "releases_text",
    default=None,
    metavar="LIST",
    help="Releases to search instead of asking the index (comma-separated).",
)
@output_options
@user_errors
def bisect_cmd(suite: str, variant: str | None, good: str, bad: str, fact_text: str, against: str | None, pre: bool,
               target: str | None, shape: str | None, config: str | None, save: str | None,
               releases_text: str | None, color: str, paging: str) -> None:  # fmt: skip
    """Find the first Triton release between --good and --bad where a fact about a variant changes, then diagnose
    the last good against the first bad release.

    \b
    irdiff bisect matmul --variant annotated --good 3.3.1 --bad 3.6.0 --fact 'spec.stride_ak.type!=constexpr'
    irdiff bisect persistent-matmul --good 3.3.1 --bad 3.9.0 --fact 'ptxas.shared>100000'
    """
    import time

    from irdiff.bisect import bisect_releases, parse_fact, releases_between, stage0_diagnosis
    from irdiff.compile import parse_config_option, target_default
    from irdiff.compile.envs import published_versions
    from irdiff.suite import load_suite

    t0 = time.perf_counter()
    fact = parse_fact(fact_text)
    s = load_suite(suite)
    variant = variant or s.pair(None, None)[0]
    s.variant(variant)
    if fact.needs_pair:
        against = against or s.pair(variant, None)[1]
        if against == variant:
            raise ValueError(f"--fact {fact_text}: a finding needs a second variant (--against)")
    available = [r.strip() for r in releases_text.split(",")] if releases_text else published_versions(pre=pre)
    releases = releases_between(good, bad, available, pre=pre)
    tgt = (target or target_default()).lower()
    check_new_dir(save, "--save")
    click.echo(f"bisect {suite} --variant {variant} on {tgt}: {len(releases)} releases {', '.join(releases)}")
    click.echo(f"fact: {fact_text}  (holds = bad)")
    click.echo(f"  {'release':<10} {'value':<24} {'state':<5} {'time':>8}")
    result = bisect_releases(suite, variant, fact, releases, tgt, against=against, save=save,
                             shape=parse_shape(shape), config=parse_config_option(config), echo=click.echo)  # fmt: skip
    tried = sorted(result.trials, key=lambda t: releases.index(t.release))
    click.echo("")
    click.echo("releases tried (oldest first): " + ", ".join(
        f"{t.release}={'skip' if t.holds is None else 'bad' if t.holds else 'good'}" for t in tried))  # fmt: skip
    elapsed = time.perf_counter() - t0
    if result.first_bad is None:
        click.echo(f"last good {result.last_good}; the first bad one is among {', '.join(result.first_bad_candidates)}"
                   f" (the ones between could not be evaluated) · {elapsed:.1f} s")  # fmt: skip
        sys.exit(1)
    click.echo(f"first bad release: {result.first_bad} (last good: {result.last_good}) · {elapsed:.1f} s")
    bundle = result.bundle
    assert bundle is not None
    a_t, b_t = result.trial(result.last_good or ""), result.trial(result.first_bad)
    assert a_t is not None and b_t is not None
    a, b = b_t.name, a_t.name  # inspect the first bad release against the last good one
    bundle.pair = [a, b]
    bundle.save()
    click.echo(f"bundle: {bundle.directory}")
    click.echo("")
    if bundle.variants[a].error or bundle.variants[b].error:
        findings, notes = stage0_diagnosis(bundle, a, b)
        click.echo(f"diagnosis of {a} vs {b} (stage 0 only):")
        for n in notes:
            click.echo(f"  note: {n}")
        for f in findings:
            click.echo(f"  {f.severity:<8} {f.id}  {f.title}")
            click.echo(f"      {f.explanation}")
            for e in f.evidence[:6]:
                click.echo(f"      {e.variant}: {e.text}")
        return
    _show_comparison(bundle, a, b, None, 3, False, False, None, color, paging)


@cli.command("sweep")
@click.argument("plan", type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Print the job counts (compile jobs, cached, diagnosis jobs) and stop.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=0,
    show_default="cores",
    help="Local worker processes (--executor local).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Run jobs in local processes or as Ray tasks.",
)
@click.option("--ray-address", default=None, help="Ray cluster: auto (started with `ray start`) or ray://HOST:PORT.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Output directory (default: ./<plan name>.sweep): results.parquet, overview.html, digest.md.",
)
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="A previous sweep's results.parquet: print what changed.",
)
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    metavar="RULE",
    help="Exit 1 when RULE trips: severity>=major, registers>+10%, spills>+0, shared>+N, counts>+N, "
    "findings>+N, failed>0 (repeatable).",
)
@click.option("--no-cache", is_flag=True, help="Compile every variant afresh (results still enter the cache).")
@click.option("--no-reports", is_flag=True, help="Do not write the per-pair HTML reports.")
@click.option(
    "--timings",
    "timings_path",
    type=click.Path(dir_okay=False),
    default=None,
    show_default="$IRDIFF_SWEEP_TIMINGS or sweep-timings.json in irdiff's cache",
    help="Job durations of earlier sweeps: jobs start longest first; this sweep's durations are added.",
)
@click.option("--no-timings", is_flag=True, help="Start jobs in plan order; record no durations.")
@click.option("-q", "--quiet", is_flag=True, help="No progress display.")
@user_errors
def sweep_cmd(plan: str, dry_run: bool, jobs: int, executor: str, ray_address: str | None, out_dir: str | None,
              baseline: str | None, fail_on: tuple[str, ...], no_cache: bool, no_reports: bool,
              timings_path: str | None, no_timings: bool, quiet: bool) -> int:  # fmt: skip
    """Run a sweep PLAN (TOML): suites × pairs × targets × Triton releases × configs × shapes.

    Writes results.parquet (one row per pair and setting), overview.html and digest.md; with --baseline and
    --fail-on it is a CI gate (exit 1 when a rule trips). See README "Sweeps".

    \b
    irdiff sweep plan.toml --dry-run
    irdiff sweep plan.toml -j 8 --out sweep-new
    irdiff sweep plan.toml --executor ray --ray-address auto
    irdiff sweep plan.toml --baseline old/results.parquet --fail-on 'severity>=major' --fail-on 'registers>+10%'
    """
    from pathlib import Path

    from irdiff.render.progress import progress_enabled
    from irdiff.sweep import dry_run as count_jobs
    from irdiff.sweep import load_plan, run_sweep
    from irdiff.sweep.executors import make_executor
    from irdiff.sweep.gate import compare, evaluate, parse_rule
    from irdiff.sweep.plan import default_out_dir
    from irdiff.sweep.progress import sweep_progress
    from irdiff.sweep.report import write_digest
    from irdiff.sweep.table import read_table
    from irdiff.sweep.timings import TimingHistory
    from irdiff.textsafe import one_line

    if timings_path and no_timings:
        raise ValueError("--timings and --no-timings exclude each other")
    rules = [parse_rule(r) for r in fail_on]
    old = read_table(baseline) if baseline else None
    if old is None and any(r.relative or r.metric in ("findings", "counts") for r in rules):
        raise ValueError("--fail-on with +N compares with a baseline: give --baseline OLD.parquet")
    if not dry_run:
        check_new_dir(out_dir, "--out")  # before the plan is expanded (that imports the suites)
    p = load_plan(plan)
    if no_reports:
        p.reports = False
    expansion, counts = count_jobs(p, use_cache=not no_cache)
    if dry_run:
        click.echo(f"plan {one_line(p.name)}: " + "; ".join(counts.lines()))
        return 0
    out = Path(out_dir) if out_dir else default_out_dir(p.name)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a directory")
    timings = None if no_timings else TimingHistory.load(timings_path)
    ex = make_executor(executor, jobs, ray_address)
    try:
        with sweep_progress(progress_enabled(quiet)) as progress:
            result = run_sweep(p, out, ex, progress=progress, use_cache=not no_cache, expansion=expansion,
                               timings=timings)  # fmt: skip
    finally:
        ex.close()
    c = result.counts
    n = sum(c.values())
    click.echo(
        f"sweep {one_line(p.name)}: {n} jobs on {result.executor} ({result.workers} workers) in "
        f"{result.seconds:.1f} s ({n / max(result.seconds, 1e-9):.2f} jobs/s): {c.get('done', 0)} done, "
        f"{c.get('cached', 0)} cached, {c.get('failed', 0)} failed; order: {result.order}"
    )
    for label, err in result.failures:
        click.echo(f"  failed: {one_line(label)}: {one_line(err)}", err=True)
    click.echo(f"table: {out / 'results.parquet'}  overview: {out / 'overview.html'}  digest: {out / 'digest.md'}")
    if old is None and not rules:
        return 0
    changes = compare(old, result.rows) if old is not None else []
    if old is not None:
        click.echo(f"changes since {baseline}: {len(changes) or 'none'}")
        for ch in changes:
            click.echo(f"  {ch.kind:<8} {one_line(ch.row)}: {one_line(ch.detail)}")
        write_digest(result.rows, out / "digest.md", p.name, [f"{ch.kind}: {ch.row}: {ch.detail}" for ch in changes])
    trips = evaluate(rules, result.rows, old)
    for t in trips:
        click.echo(f"gate: --fail-on {t.rule!r} tripped on {len(t.rows)} row(s):")
        for r in t.rows[:50]:
            click.echo(f"  {one_line(r)}")
    if rules:
        click.echo("gate: " + ("FAILED" if trips else f"passed ({', '.join(r.text for r in rules)})"))
    return 1 if trips else 0


def main() -> None:
    """Console entry point. Ctrl-C (SIGINT) exits with status 130 and one line on stderr, SIGTERM with 143;
    compile workers are stopped with their process groups and no partial bundle is left (see
    :func:`irdiff.compile.compile_bundle`)."""
    global _PROGRAM_ENV
    _PROGRAM_ENV = dict(os.environ)  # `irdiff capture` runs the program in the environment it was given
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    from irdiff.interrupt import Interrupted, exit_interrupted, ignore_from_now, install

    install()
    try:
        try:
            cli(prog_name="irdiff")  # ends with SystemExit (click's standalone mode)
        finally:
            ignore_from_now()  # the interpreter's shutdown must not die of a late Ctrl-C (status -2, no line)
    except Interrupted as e:
        exit_interrupted(e)


if __name__ == "__main__":
    main()
