"""Command line: ``irdiff SUITE --variant A --against B`` plus subcommands (list, compile, diff, show, …).

The CLI stays thin: it parses options, calls the pipeline modules (compile → normalize → align → diagnose →
render; runner beside), and turns their one-line errors into ``error: …`` on stderr with exit status 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from irdiff.bundle import BundleError
from irdiff.suite import SuiteError

EXIT_OK = 0
EXIT_USAGE = 2


class IrdiffError(click.ClickException):
    """A user-facing failure: printed as ``error: <message>``, exit status 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def user_errors(f: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the pipeline's one-line exceptions into :class:`IrdiffError` (no tracebacks for bad input)."""

    @wraps(f)
    def inner(*args: Any, **kwargs: Any) -> Any:
        from irdiff.compile.compat import UnsupportedTriton

        try:
            return f(*args, **kwargs)
        except (SuiteError, BundleError, UnsupportedTriton, ValueError) as e:
            raise IrdiffError(str(e)) from None

    return inner


class SuiteFirstGroup(click.Group):
    """A group where an unknown first word is a suite: ``irdiff matmul …`` means ``irdiff compare matmul …``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["compare", *args]
        return super().parse_args(ctx, args)


@click.group(cls=SuiteFirstGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="irdiff")
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
        help="GPU target: sm80, sm86, sm89, sm90, sm100, sm120 (default: the local GPU, else sm90).",
    )(f)


def compile_options(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        target_option,
        click.option("--config", "config", default=None, help="Autotune config: index or KEY=VALUE,..."),
        click.option("--all-configs", is_flag=True, help="Compile every autotune config."),
        click.option("--shape", "shape", default=None, help="Problem sizes, e.g. M=4096,N=4096,K=512."),
        click.option("--passes", is_flag=True, help="Also capture per-pass MLIR snapshots (MLIR_ENABLE_DUMP)."),
        click.option("--save", "save", default=None, type=click.Path(file_okay=False), help="Bundle directory."),
        click.option("--no-cache", is_flag=True, help="Recompile even if irdiff has a cached result."),
        click.option("-j", "--jobs", default=0, type=int, help="Parallel compile processes (default: cores)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def parse_shape(text: str | None) -> dict[str, int]:
    if not text:
        return {}
    out: dict[str, int] = {}
    for part in text.split(","):
        k, eq, v = part.partition("=")
        if not eq or not v.strip().lstrip("-").isdigit():
            raise ValueError(f"--shape {text!r}: expected NAME=INT[,NAME=INT...]")
        out[k.strip()] = int(v)
    return out


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
) -> Any:
    from irdiff.compile import CompileRequest, parse_config_option, target_default

    return CompileRequest(
        suite=suite,
        variants=variants,
        target=(target or target_default()).lower(),
        config="all" if all_configs else parse_config_option(config),
        shape=parse_shape(shape),
        passes=passes,
        use_cache=not no_cache,
        jobs=jobs,
    )


def _report_errors(bundle: Any) -> int:
    """Print one line per variant that failed to compile; return how many failed."""
    failed = 0
    for v in bundle.variants.values():
        if v.error:
            failed += 1
            first = v.error.strip().splitlines()
            click.echo(f"error: variant {v.name!r} failed to compile: {first[0] if first else v.error}", err=True)
            for line in first[1:6]:
                click.echo(f"  {line}", err=True)
    return failed


@cli.command("list")
@user_errors
def list_cmd() -> None:
    """List built-in suites and their variants."""
    from irdiff.suite import list_suites

    for s in list_suites():
        click.echo(f"{s.name}: {s.description}")
        for name, v in s.variants.items():
            click.echo(f"  {name:24s} {v.description}")


@cli.command("compile")
@click.argument("suite")
@click.option("--variant", "variants", multiple=True, help="Variant to compile (repeatable; default: all).")
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
) -> None:
    """Compile variants of SUITE for a target and save every stage into a bundle directory."""
    from irdiff.compile import compile_bundle
    from irdiff.suite import load_suite

    names = list(variants) or list(load_suite(suite).variants)
    req = _build_request(suite, names, target, config, all_configs, shape, passes, no_cache, jobs)
    bundle = compile_bundle(req, save, command=["irdiff", *sys.argv[1:]])
    for v in bundle.variants.values():
        if v.error:
            continue
        r = v.resources
        click.echo(
            f"{v.name}: {v.kernel} {bundle.target} — {len(v.stages)} stages, {r.registers} registers, "
            f"{r.spill_store_bytes or 0} B spilled, {r.shared_bytes} B shared"
            f"{' (cached)' if v.cache_hit else f', {v.compile_seconds:.1f} s'}"
        )
    click.echo(f"bundle: {bundle.directory}")
    if _report_errors(bundle):
        sys.exit(1)


@cli.command("compare")
@click.argument("suite")
@click.option("--variant", "variant", default=None, help="Variant to inspect (default: the suite's pair).")
@click.option("--against", "against", default=None, help="Variant to compare with.")
@compile_options
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
) -> None:
    """Compile two variants of SUITE and show what differs, stage by stage, and why."""
    from irdiff.compile import compile_bundle
    from irdiff.suite import load_suite

    s = load_suite(suite)
    a, b = s.pair(variant, against)
    req = _build_request(suite, [a, b], target, config, all_configs, shape, passes, no_cache, jobs)
    bundle = compile_bundle(req, save, command=["irdiff", *sys.argv[1:]])
    bundle.pair = [a, b]
    bundle.save()
    _report_errors(bundle)
    click.echo(f"bundle: {bundle.directory}")


def main() -> None:
    """Console entry point."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    cli(prog_name="irdiff")


if __name__ == "__main__":
    main()
