"""The on-disk bundle: everything one comparison produced, readable without Triton.

Layout of a bundle directory::

    DIR/manifest.json            versioned manifest (schema, suite, target, versions, command line, variants)
    DIR/<variant>/variant.json   VariantResult without the stage texts
    DIR/<variant>/<stage file>   one text file per stage: kernel.py, ttir.mlir, ttgir.mlir, llir.ll, ptx.ptx,
                                 sass.sass, kernel.cubin; logs: llvm-debug.log, ptxas.log; passes/NNN-<pass>.mlir

Everything after the compile driver (differ, diagnostics, runner, reports) reads bundles only, so a bundle made on
one machine can be diffed and reported on another. ``SCHEMA`` changes when the layout changes incompatibly; readers
reject other major versions with :class:`BundleError`.

Bundles are untrusted input (a bundle attached to an issue is someone else's data): ``manifest.json`` and every
``variant.json`` are validated against :data:`MANIFEST_SCHEMA` / :data:`VARIANT_SCHEMA` (jsonschema) on load, and
every file a record names is resolved inside its variant directory (:meth:`VariantResult.path`: no absolute paths,
no ``..``, no symlink leading out); the records themselves are read only as plain files, never through a symlink
(:func:`_read_bytes`). Variant names become directory names only through :func:`variant_dirname`.

Writers are concurrent-safe: :func:`bundle_lock` (``filelock``, a ``.<bundle>.lock`` file beside the bundle)
serializes them; a variant directory is built in a temporary ``.tmp-<pid>-*`` directory inside the bundle and
swapped into place in one step (:func:`install_dir`); ``manifest.json`` is written last, through a temporary file
and ``os.replace``, so a reader sees either the old or the new bundle, never half of one. Leftovers of an
interrupted writer (``.tmp-*`` of a dead process, a bundle directory without a manifest) are reclaimed by the next
writer (:func:`reclaim_temporaries`, :func:`prepare_bundle_dir`).

Size: just over 800 lines because the layout, its two schemas, the confined reading of untrusted records and the
concurrent-safe writing are one contract: split apart, each half would need the other's private path and record rules.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irdiff import stages

if TYPE_CHECKING:
    from filelock import FileLock

SCHEMA = "irdiff.bundle/1"

# Pipeline order of the text stages and their file names, declared once in irdiff.stages (live views: a stage
# declared later appears here too); "python" is the kernel's source (stage 0 is the specialization table).
STAGES: Sequence[str] = stages.STAGES
STAGE_FILES: Mapping[str, str] = stages.FILES
LOG_FILES: dict[str, str] = {
    "llvm_debug": "llvm-debug.log",  # TRITON_ENABLE_LLVM_DEBUG output: coalescing and pipelining reasoning
    "ptxas": "ptxas.log",  # ptxas -v report
    "compile": "compile.log",  # anything else the compiler printed
}


class BundleError(Exception):
    """A bundle is missing, unreadable, malformed (schema), names a file outside itself, or has an unsupported
    schema version (one-line message)."""


# A file a record names: relative, plain path parts (no "..", no leading "/" or "~", no control characters).
_REL_FILE = r"^(?!.*(^|/)\.\.?(/|$))[A-Za-z0-9_@+=,.-][A-Za-z0-9_@+=,.-]*(/[A-Za-z0-9_@+=,.-][A-Za-z0-9_@+=,.-]*)*$"
# What a value that fails a schema ``pattern`` should have been, in words (a user never sees the regex).
_PATTERN_WORDS = {
    _REL_FILE: "is not a relative path inside the bundle (plain names joined by `/`; no leading `/`, `.` or `..`)",
}
_STR_OR_NULL = {"type": ["string", "null"]}
_INT_OR_NULL = {"type": ["integer", "null"]}

MANIFEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "irdiff bundle manifest.json",
    "type": "object",
    "required": ["schema"],
    "properties": {
        "schema": {"type": "string"},
        "suite": {"type": "string"},
        "target": {"type": "string"},
        "triton_version": {"type": "string"},
        "ptxas_version": {"type": "string"},
        "command": {"type": "array", "items": {"type": "string"}},
        "created": {"type": "string"},
        "shape": {"type": "object", "additionalProperties": {"type": "integer"}},
        "pair": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "variants": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 512}},
        "runs": {"type": "object"},
    },
}

VARIANT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "irdiff bundle variant.json",
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 512},
        "kernel": {"type": "string"},
        "target": {"type": "string"},
        "config": {"type": "object"},
        "options": {"type": "object"},
        "specialization": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "index", "type"],
                "properties": {
                    "name": {"type": "string"},
                    "index": {"type": "integer"},
                    "type": {"type": "string"},
                    "divisibility": _INT_OR_NULL,
                    "constexpr": _STR_OR_NULL,
                    "reason": {"type": "string"},
                    "value": {"type": "string"},
                    "annotation": _STR_OR_NULL,
                    "is_constexpr_param": {"type": "boolean"},
                    "do_not_specialize": {"type": "boolean"},
                    "do_not_specialize_on_alignment": {"type": "boolean"},
                },
            },
        },
        "metadata": {"type": "object"},
        "resources": {
            "type": "object",
            "properties": {
                "registers": _INT_OR_NULL,
                "spill_store_bytes": _INT_OR_NULL,
                "spill_load_bytes": _INT_OR_NULL,
                "stack_bytes": _INT_OR_NULL,
                "shared_bytes": _INT_OR_NULL,
                "static_shared_bytes": _INT_OR_NULL,
                "barriers": _INT_OR_NULL,
                "ptxas_version": {"type": "string"},
            },
        },
        "stages": {"type": "object", "additionalProperties": {"type": "string", "pattern": _REL_FILE}},
        "logs": {"type": "object", "additionalProperties": {"type": "string", "pattern": _REL_FILE}},
        "passes": {"type": "array", "items": {"type": "string", "pattern": _REL_FILE}},
        "compile_seconds": {"type": ["number", "null"]},
        "cache_hit": {"type": "boolean"},
        "error": _STR_OR_NULL,
        "timings": {"type": "object"},
    },
}


MEMO_MAX_MARKERS = 4096  # validation markers kept in a memo directory (see _bound_memo): ~4 KiB of inode each
_HEX64 = re.compile(r"[0-9a-f]{64}")
MEMO_VERSION = 1  # part of every validation memo key: bump when what "valid" means changes without a schema change


def _memo_key(schema: dict[str, Any], data: bytes) -> str:
    """sha256 over the memo version, the schema (canonical JSON) and a record file's exact bytes."""
    h = hashlib.sha256(f"irdiff-valid/{MEMO_VERSION}\0".encode())
    h.update(json.dumps(schema, sort_keys=True).encode())
    h.update(b"\0")
    h.update(data)
    return h.hexdigest()


def _memo_says_valid(memo: Path, key: str) -> bool:
    """A marker ``memo/<key>`` exists as a plain empty file (no symlink: the memo is untrusted cache data; a marker
    of any other shape is ignored and the record validated again)."""
    import stat

    try:
        st = os.lstat(memo / key)
    except (OSError, ValueError):
        return False
    if not (stat.S_ISREG(st.st_mode) and st.st_size == 0):
        return False
    try:  # recently used: the bound (:data:`MEMO_MAX_MARKERS`) removes the least recently used markers first
        os.utime(memo / key, follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass
    return True


def _memo_record_valid(memo: Path, key: str) -> None:
    """Leave the marker of a record that passed validation (best effort: the memo is only an accelerator)."""
    try:
        memo.mkdir(parents=True, exist_ok=True)
        os.close(os.open(memo / key, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644))
    except OSError:
        return
    _bound_memo(memo)


def _bound_memo(memo: Path, limit: int | None = None) -> None:
    """Keep the memo directory to at most ``limit`` markers (:data:`MEMO_MAX_MARKERS`): when it holds more, the least
    recently used ones (oldest modification time: a hit touches its marker) are removed down to three quarters of
    the limit. Only markers are removed (empty plain files named by 64 hex digits, as :func:`_memo_key` names them);
    anything else in the directory is left alone. Best effort: a marker another process removed first is skipped."""
    import stat

    limit = MEMO_MAX_MARKERS if limit is None else limit
    markers: list[tuple[int, str]] = []
    try:
        with os.scandir(memo) as it:
            for e in it:
                if len(e.name) != 64 or not _HEX64.fullmatch(e.name):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_size == 0:
                    markers.append((st.st_mtime_ns, e.name))
    except OSError:
        return
    if len(markers) <= limit:
        return
    markers.sort()
    for _, name in markers[: len(markers) - limit * 3 // 4]:
        try:
            os.unlink(memo / name)
        except OSError:
            pass


def _validate(record: Any, schema: dict[str, Any], where: Path) -> None:
    """Check a parsed JSON record against a schema; one-line :class:`BundleError` naming the first bad field."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    err = jsonschema.exceptions.best_match(validator.iter_errors(record))
    if err is None:
        return
    at = "/".join(str(p) for p in err.absolute_path) or "(top level)"
    msg = " ".join(err.message.split())
    if err.validator == "pattern":
        shown = repr(err.instance)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        msg = f"{shown} {_PATTERN_WORDS.get(str(err.validator_value), 'has an unexpected form')}"
    if len(msg) > 160:
        msg = msg[:157] + "..."
    from irdiff.textsafe import clean

    raise BundleError(clean(f"{where}: malformed record at {at}: {msg}"))


_SAFE_DIRNAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_@+=,.-]{0,119}")


def variant_dirname(name: str) -> str:
    """The directory a variant called ``name`` lives in, inside its bundle: ``name`` itself when it is a plain
    file name (letters, digits, ``_@+=,.-``, not starting with a dot, ≤ 120 characters), else ``name`` with every
    other character replaced by ``_`` plus ``-<8 hex digits of its SHA-256>`` (``a/b`` → ``a_b-<hash>``), so a
    name never becomes a path (``/``, ``..``) and two different names never share a directory."""
    if _SAFE_DIRNAME.fullmatch(name) and name not in (".", ".."):
        return name
    base = re.sub(r"[^A-Za-z0-9_@+=,.-]", "_", name).lstrip(".")[:100] or "variant"
    return f"{base}-{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def confined(root: Path, rel: str) -> Path:
    """``root/rel`` resolved, checked to stay inside ``root`` (symlinks followed, then compared).

    :raises BundleError: ``rel`` is absolute, has ``..`` parts, or resolves (through a symlink) outside ``root``.
    """
    from irdiff.textsafe import clean

    p = Path(rel)
    if p.is_absolute() or rel.startswith("~") or ".." in p.parts or not rel:
        raise BundleError(clean(f"{root}: refusing the path {rel!r} named in the bundle (absolute or with '..')"))
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(root / p))
    if real != real_root and real_root not in real.parents:
        raise BundleError(clean(f"{root}: refusing {rel!r}: it leads outside the bundle (to {real})"))
    return root / p


@dataclass
class ArgSpec:
    """Stage 0: how the JIT specialized one kernel parameter (from the installed Triton's own binder).

    :ivar type: signature type the JIT chose (``*fp16``, ``i32``, ``i64``, ``fp32``, ``u1``) or ``constexpr``.
    :ivar divisibility: the ``tt.divisibility`` attribute (16) or None.
    :ivar constexpr: ``repr`` of the constant value when the parameter became a constexpr, else None.
    :ivar reason: plain sentence: why this specialization (value, alignment, annotation, do_not_specialize).
    :ivar value: description of the example value (``1``, ``fp16[1024, 1024] strides (1024, 1) align 16``).
    :ivar annotation: the Python annotation as written (``int``, ``tl.constexpr``) or None.
    """

    name: str
    index: int
    type: str
    divisibility: int | None = None
    constexpr: str | None = None
    reason: str = ""
    value: str = ""
    annotation: str | None = None
    is_constexpr_param: bool = False
    do_not_specialize: bool = False
    do_not_specialize_on_alignment: bool = False

    @property
    def kind(self) -> str:
        """``constexpr``, ``pointer`` or ``scalar``."""
        if self.type == "constexpr":
            return "constexpr"
        return "pointer" if self.type.startswith("*") else "scalar"

    def summary(self) -> str:
        """Compact cell text, e.g. ``i32 div16``, ``constexpr = 1``, ``*fp16 div16``."""
        if self.type == "constexpr":
            return f"constexpr = {self.constexpr}"
        return self.type + (f" div{self.divisibility}" if self.divisibility else "")


@dataclass
class Resources:
    """Per-kernel resources. Registers/stack/spills from ptxas' own ``-v`` report (``ptxas info : Used N
    registers``); shared memory in bytes from Triton's metadata (``metadata.shared``, dynamic smem the launcher
    requests); ``static_shared`` from ``cuobjdump --dump-resource-usage``."""

    registers: int | None = None
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    stack_bytes: int | None = None
    shared_bytes: int | None = None
    static_shared_bytes: int | None = None
    barriers: int | None = None
    ptxas_version: str = ""


@dataclass
class VariantResult:
    """One compiled variant. ``stages`` maps stage name → file name inside the variant directory.

    ``error`` holds the compiler's message when the variant failed to compile; the other fields are then partial.
    ``settings`` records what this variant was compiled with: ``variant`` (the suite's variant name), ``target``,
    ``triton`` (version), ``triton_source``
    (installed, or which environment), ``ptxas`` (version) and ``env`` (compile environment variables it set); empty
    in bundles made before irdiff recorded them.
    """

    name: str
    kernel: str = ""
    target: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    specialization: list[ArgSpec] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    resources: Resources = field(default_factory=Resources)
    stages: dict[str, str] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    passes: list[str] = field(default_factory=list)
    compile_seconds: float | None = None
    cache_hit: bool = False
    error: str | None = None
    timings: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    directory: str = ""

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("directory")
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], directory: str = "") -> VariantResult:
        known = {f.name for f in fields(cls)}
        d = {k: v for k, v in d.items() if k in known}
        # Fields this irdiff does not know (a newer writer's) are ignored; known ones were type-checked on load.
        spec_fields = {f.name for f in fields(ArgSpec)}
        res_fields = {f.name for f in fields(Resources)}
        d["specialization"] = [
            ArgSpec(**{k: v for k, v in a.items() if k in spec_fields}) for a in d.get("specialization", [])
        ]
        d["resources"] = Resources(**{k: v for k, v in d.get("resources", {}).items() if k in res_fields})
        d["directory"] = directory
        return cls(**d)

    def path(self, stage: str) -> Path | None:
        """The file of a stage or log inside the variant directory, or None when the record names none.

        :raises BundleError: the record names a file outside the variant directory (absolute, ``..``, or a
            symlink leading out): a bundle is untrusted data and nothing outside it is read.
        """
        name = self.stages.get(stage) or self.logs.get(stage)
        return confined(Path(self.directory), name) if name else None

    def text(self, stage: str) -> str:
        """Text of a stage or log (``""`` when it was not produced).

        :raises BundleError: the file named lies outside the variant directory (see :meth:`path`).
        """
        p = self.path(stage)
        if p is None or not p.is_file():
            return ""
        return p.read_text(errors="replace")


@dataclass
class Bundle:
    """A comparison on disk: the manifest plus its variants (see the module docstring for the layout)."""

    suite: str
    target: str
    triton_version: str = ""
    ptxas_version: str = ""
    command: list[str] = field(default_factory=list)
    created: str = ""
    shape: dict[str, int] = field(default_factory=dict)
    variants: dict[str, VariantResult] = field(default_factory=dict)
    pair: list[str] = field(default_factory=list)
    runs: dict[str, Any] = field(default_factory=dict)
    schema: str = SCHEMA
    directory: str = ""

    def compiled_variant(self, name: str) -> VariantResult:
        """The variant called ``name``, compiled without error.

        :raises BundleError: the bundle has no such variant (the message lists those it has), or it failed to
            compile (the message quotes the compiler's first line).
        """
        v = self.variants.get(name)
        if v is None:
            have = ", ".join(self.variants) or "none"
            where = f" {self.directory}" if self.directory else ""
            raise BundleError(f"variant {name!r} is not in the bundle{where} (it has: {have})")
        if v.error:
            first = v.error.strip().splitlines()
            raise BundleError(f"variant {name!r} failed to compile: {first[0] if first else v.error}")
        return v

    def manifest(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "suite": self.suite,
            "target": self.target,
            "triton_version": self.triton_version,
            "ptxas_version": self.ptxas_version,
            "command": self.command,
            "created": self.created,
            "shape": self.shape,
            "pair": self.pair,
            "variants": list(self.variants),
            "runs": self.runs,
        }

    def save(self, memo: Path | None = None) -> None:
        """Write ``manifest.json`` (and ``variant.json`` of variants that have none yet, or whose record is the
        same compile as the one on disk), under the bundle's lock. With ``memo`` (see :func:`read_record`), the
        records written are read back through it, validated and remembered, so the next reader need not
        validate them (a record that fails is left to that reader to report).

        Concurrent writers do not lose each other's work: variants another process added since this bundle was
        loaded stay listed (their directories are kept), and runs are merged. A variant directory another
        process replaced by a different compile meanwhile keeps its record (see :func:`install_dir`).
        """
        root = Path(self.directory)
        root.mkdir(parents=True, exist_ok=True)
        with bundle_lock(root):
            for v in self.variants.values():
                vdir = Path(v.directory or root / variant_dirname(v.name))
                vdir.mkdir(parents=True, exist_ok=True)
                vj = vdir / "variant.json"
                if vj.is_file() and v.metadata.get("cache_key"):
                    try:
                        on_disk = json.loads(_read_bytes(vj, "variant record")).get("metadata", {}).get("cache_key")
                    except (BundleError, ValueError, AttributeError):
                        on_disk = None
                    if on_disk and on_disk != v.metadata.get("cache_key"):
                        continue  # another writer installed another compile here: its record stays
                atomic_write(vj, json.dumps(v.to_json(), indent=1, default=str))
            manifest = self.manifest()
            try:
                old = json.loads(_read_bytes(root / "manifest.json", "manifest"))  # never through a symlink
            except (BundleError, ValueError):
                old = {}
            if isinstance(old, dict) and old.get("schema") == self.schema:
                for name in old.get("variants") or []:
                    if (
                        isinstance(name, str)
                        and name not in manifest["variants"]
                        and (root / variant_dirname(name) / "variant.json").is_file()
                    ):
                        manifest["variants"].append(name)
                if isinstance(old.get("runs"), dict):
                    manifest["runs"] = {**old["runs"], **manifest["runs"]}
            atomic_write(root / "manifest.json", json.dumps(manifest, indent=1, default=str))
            if memo is not None:
                try:
                    load_bundle(root, memo)
                except BundleError:
                    pass


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``path`` through a temporary file beside it and ``os.replace``: readers see the old or the new file,
    never a partial one (an interrupted write leaves only a ``.tmp-<pid>-*`` file, reclaimed later)."""
    import tempfile  # not at import time: a warm run writes nothing

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{TMP_PREFIX}{os.getpid()}-")
    try:
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with _suppress_oserror():
            os.unlink(tmp)
        raise


_atomic_write = atomic_write  # former private name


class _suppress_oserror:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return exc[0] is not None and issubclass(exc[0], OSError)


# --- locking, temporary directories, atomic installation ------------------------------------------------------

TMP_PREFIX = ".tmp-"
_TMP_NAME = re.compile(re.escape(TMP_PREFIX) + r"(\d+)-")
LOCK_TIMEOUT_S = 900.0  # a writer waits this long for another writer of the same bundle (a cold compile)
STALE_TMP_S = 6 * 3600.0  # a temporary of a live process this old is reclaimed too (the pid was reused)


def bundle_lock(root: str | os.PathLike[str], timeout: float | None = None) -> FileLock:
    """The lock serializing writers of the bundle directory ``root``: ``filelock.FileLock`` on
    ``.<name>.lock`` beside it (outside the bundle, so the bundle itself can be replaced). Reentrant in one
    thread; released by the OS when the process dies (``flock``), so a killed writer never blocks the next.

    Use as ``with bundle_lock(root): ...``; acquiring raises :class:`BundleError` (one line) after ``timeout``
    seconds (default :data:`LOCK_TIMEOUT_S`, env ``IRDIFF_LOCK_TIMEOUT``).
    """
    r = Path(root).absolute()
    r.parent.mkdir(parents=True, exist_ok=True)
    t = timeout if timeout is not None else float(os.environ.get("IRDIFF_LOCK_TIMEOUT") or LOCK_TIMEOUT_S)
    key = str(r.parent / f".{r.name}.lock")
    with _LOCKS_GUARD:  # one instance per path and process: a second flock on another descriptor would deadlock
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = _lock_class()(key, timeout=t, thread_local=False)
        lock.timeout = t
    return lock


_LOCKS: dict[str, FileLock] = {}
_LOCKS_GUARD = threading.Lock()
_LOCK_CLASS: list[type[FileLock]] = []


def _lock_class() -> type[FileLock]:
    """``FileLock`` whose timeout is a one-line :class:`BundleError`; filelock is imported on the first lock (a
    warm run that only reads takes none)."""
    if not _LOCK_CLASS:
        from filelock import FileLock, Timeout

        class _Lock(FileLock):
            def __enter__(self) -> _Lock:  # type: ignore[override]
                try:
                    self.acquire()
                except Timeout:
                    raise BundleError(
                        f"{self.lock_file}: another irdiff process has been writing this bundle for {self.timeout:.0f} s"
                    ) from None
                return self

        _LOCK_CLASS.append(_Lock)
    return _LOCK_CLASS[0]


def tmp_dir_in(parent: Path, tag: str = "") -> Path:
    """A new temporary directory ``parent/.tmp-<pid>-<tag>-<random>`` (reclaimable by pid, see
    :func:`reclaim_temporaries`)."""
    parent.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", tag)[:40]
    import tempfile

    return Path(tempfile.mkdtemp(prefix=f"{TMP_PREFIX}{os.getpid()}-{safe}-", dir=parent))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reclaim_temporaries(parent: Path) -> list[Path]:
    """Remove ``.tmp-<pid>-*`` entries in ``parent`` left by processes that are gone (killed, interrupted), or
    older than :data:`STALE_TMP_S`; returns what was removed. Temporaries of live processes are kept."""
    removed: list[Path] = []
    try:  # names, not Paths: a compile cache holds thousands of entries and few (usually no) temporaries
        with os.scandir(parent) as it:
            names = [d.name for d in it if d.name.startswith(TMP_PREFIX)]
    except OSError:
        return removed
    now = time.time()
    for name in names:
        m = _TMP_NAME.match(name)
        if not m:
            continue
        e = parent / name
        pid = int(m.group(1))
        try:
            age = now - e.lstat().st_mtime
        except OSError:
            continue
        if (pid != os.getpid() and not _pid_alive(pid)) or age > STALE_TMP_S:
            remove_path(e)
            removed.append(e)
    return removed


def remove_path(p: Path) -> None:
    """Remove a file, symlink (not its target) or directory tree; missing is fine."""
    try:
        if p.is_symlink() or not p.is_dir():
            p.unlink(missing_ok=True)
        else:
            shutil.rmtree(p, ignore_errors=True)
    except OSError:
        pass


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    import ctypes  # not at import time: a warm run installs nothing

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP if hasattr(errno, "ENOTSUP") else errno.EINVAL):
        return False
    raise OSError(err, os.strerror(err), str(b))


def install_dir(new: Path, dest: Path) -> None:
    """Put the finished directory ``new`` at ``dest`` in one step; an existing ``dest`` (directory, file or
    symlink — never followed) is replaced and removed. A reader sees the old or the new directory, never a
    missing or half-written one (Linux: ``renameat2`` exchange; elsewhere a rename aside then into place)."""
    try:
        os.rename(new, dest)  # dest absent (or an empty directory)
        return
    except OSError as e:
        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise
    if _exchange(new, dest):
        remove_path(new)  # now holds the old dest
        return
    aside = dest.parent / f"{TMP_PREFIX}{os.getpid()}-old-{dest.name}"
    remove_path(aside)
    os.rename(dest, aside)
    os.rename(new, dest)
    remove_path(aside)


def _read_bytes(path: Path, what: str) -> bytes:
    """The bytes of a bundle's record file ``path`` (``manifest.json``, ``variant.json``), which must be a plain file
    itself: a symlink (to a file outside the bundle, or to another bundle's record) is refused, not followed
    (``O_NOFOLLOW``), and so is a FIFO or device (opened ``O_NONBLOCK``, so a FIFO never blocks the read).

    :raises BundleError: one line: a symlink, not a plain file, or unreadable.
    """
    import stat

    from irdiff.textsafe import clean

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno == errno.ELOOP or os.path.islink(path):
            raise BundleError(
                clean(f"{path}: refusing the {what}: it is a symlink (a bundle's records must be plain files in it)")
            ) from None
        raise BundleError(clean(f"{path}: cannot read the {what}: {e.strerror or e}")) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise BundleError(clean(f"{path}: cannot read the {what}: {os.strerror(errno.EISDIR)}"))
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(clean(f"{path}: refusing the {what}: it is not a plain file"))
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError as e:
        raise BundleError(clean(f"{path}: cannot read the {what}: {e.strerror or e}")) from None
    finally:
        os.close(fd)


def _parse_json(path: Path, data: bytes) -> Any:
    try:
        return json.loads(data.decode(errors="replace"))
    except ValueError as e:
        from irdiff.textsafe import clean

        raise BundleError(clean(f"{path}: not valid JSON: {e}")) from None


def _read_json(path: Path, what: str) -> Any:
    return _parse_json(path, _read_bytes(path, what))


def read_record(path: Path, schema: dict[str, Any], what: str = "record", memo: Path | None = None) -> Any:
    """Parse a bundle's JSON file and validate it against ``schema`` (:data:`MANIFEST_SCHEMA`,
    :data:`VARIANT_SCHEMA`).

    :param memo: a directory of validation markers (irdiff's cache passes ``<cache>/validated``): a file whose
        exact bytes passed this schema before is not validated again, so jsonschema (~0.1 s to import) is not
        imported by a warm run. A marker is an empty file named by :func:`_memo_key` (sha256 of the memo version,
        the schema and the bytes); anything else there is ignored.
    :raises BundleError: unreadable, not JSON, or of the wrong shape (one line naming the first bad field).
    """
    data = _read_bytes(path, what)
    record = _parse_json(path, data)
    key = _memo_key(schema, data) if memo is not None else ""
    if memo is not None and _memo_says_valid(memo, key):
        return record
    _validate(record, schema, path)
    if memo is not None:
        _memo_record_valid(memo, key)
    return record


def load_variant_dir(path: str | os.PathLike[str], memo: Path | None = None) -> VariantResult:
    """Read one saved variant directory (``DIR/<variant>``), validating ``variant.json`` against
    :data:`VARIANT_SCHEMA` (``memo``: as :func:`read_record`).

    :raises BundleError: no ``variant.json`` there, invalid JSON, or a record of the wrong shape (one line
        naming the field).
    """
    p = Path(path)
    vj = p / "variant.json"
    if not os.path.lexists(vj):  # a symlink or other non-file is refused by read_record, not taken for "missing"
        raise BundleError(f"{p} is not an irdiff variant directory (no variant.json)")
    d = read_record(vj, VARIANT_SCHEMA, "variant record", memo)
    try:
        return VariantResult.from_json(d, directory=str(p))
    except (ValueError, TypeError) as e:
        raise BundleError(f"{vj}: unreadable variant record: {e}") from None


def load_bundle(path: str | os.PathLike[str], memo: Path | None = None) -> Bundle:
    """Read a bundle directory (manifest and every variant record, validated; stage texts are read on use;
    ``memo``: as :func:`read_record`).

    :raises BundleError: missing directory or manifest, a record of the wrong shape, a record file that is a
        symlink or not a plain file (:func:`_read_bytes`: never followed, wherever it points), a variant directory
        outside the bundle (symlink), or a schema other than ``irdiff.bundle/1``.
    """
    root = Path(path)
    mf = root / "manifest.json"
    if not os.path.lexists(mf):  # a symlink or other non-file is refused by read_record, not taken for "missing"
        raise BundleError(f"{root} is not an irdiff bundle (no manifest.json)")
    m = read_record(mf, MANIFEST_SCHEMA, "manifest", memo)
    schema = m.get("schema", "")
    if schema.split("/")[0] != SCHEMA.split("/")[0] or schema != SCHEMA:
        from irdiff.textsafe import clean

        raise BundleError(
            clean(f"{root}: bundle schema {schema or '(none)'!r} is not supported (this irdiff reads {SCHEMA})")
        )
    variants = {}
    for name in m.get("variants", []):
        vdir = confined(root, variant_dirname(name))
        variants[name] = load_variant_dir(vdir, memo)
    return Bundle(
        suite=m.get("suite", ""),
        target=m.get("target", ""),
        triton_version=m.get("triton_version", ""),
        ptxas_version=m.get("ptxas_version", ""),
        command=m.get("command", []),
        created=m.get("created", ""),
        shape=m.get("shape", {}),
        variants=variants,
        pair=m.get("pair", []),
        runs=m.get("runs", {}),
        schema=schema,
        directory=str(root),
    )


def copy_variant(src: VariantResult, dest_dir: Path) -> VariantResult:
    """Copy a saved variant directory into ``dest_dir`` (used to assemble bundles from cached results).

    The copy is made in a temporary directory beside ``dest_dir`` and installed in one step (:func:`install_dir`),
    so a concurrent reader never sees a half-copied variant. Symlinks in the source are not followed.
    """
    tmp = tmp_dir_in(dest_dir.parent, dest_dir.name)
    try:
        shutil.copytree(src.directory, tmp, dirs_exist_ok=True, symlinks=True)
        install_dir(tmp, dest_dir)
    except BaseException:
        remove_path(tmp)
        raise
    return load_variant_dir(dest_dir)
