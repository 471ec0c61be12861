"""The bundle layer (``irdiff/bundle.py``) on the recorded bundle and hand-made records, without compiling:
records validated and read back field by field, names that never become paths, confinement, concurrent-safe
saving (merge of another writer's variants and runs), atomic writes, temporaries and one-step installation."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from irdiff import bundle as B
from irdiff.bundle import ArgSpec, Bundle, BundleError, Resources, VariantResult

RECORDED = Path(__file__).parent / "data" / "bundles" / "matmul-sm86"


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    dest = tmp_path / "rec"
    shutil.copytree(RECORDED, dest)
    return dest


def test_recorded_bundle_reads_back_every_field(recorded: Path) -> None:
    b = B.load_bundle(recorded)
    m = json.loads((recorded / "manifest.json").read_text())
    assert (b.suite, b.target, b.triton_version, b.ptxas_version) == ("matmul", "sm86", "3.9.0", "ptxas V12.9.86")
    assert b.command == m["command"] and b.created == m["created"] and b.shape == {"M": 1024, "N": 1024, "K": 1024}
    assert b.pair == ["annotated", "unannotated"] and list(b.variants) == ["annotated", "unannotated"]
    assert b.runs == {} and b.schema == B.SCHEMA and b.directory == str(recorded)
    assert b.manifest() == m  # what save() would write is what was read
    v = b.compiled_variant("annotated")
    rec = json.loads((recorded / "annotated" / "variant.json").read_text())
    assert v.directory == str(recorded / "annotated") and v.to_json() == {**rec, "settings": {}}
    a0 = v.specialization[0]
    assert isinstance(a0, ArgSpec) and (a0.name, a0.index, a0.type, a0.divisibility) == ("a_ptr", 0, "*fp16", 16)
    assert isinstance(v.resources, Resources) and v.resources.registers == 255 and v.resources.shared_bytes == 32768
    assert v.text("ttir") == (recorded / "annotated" / "ttir.mlir").read_text() and "tt.func" in v.text("ttir")
    assert v.text("ptxas") == (recorded / "annotated" / "ptxas.log").read_text()
    assert v.path("ttgir") == recorded / "annotated" / "ttgir.mlir"
    assert v.path("sass") is None and v.text("sass") == ""  # the recorded bundle keeps no SASS
    (recorded / "annotated" / "ttgir.mlir").unlink()
    assert v.text("ttgir") == ""  # named but missing: not produced


def test_unknown_fields_are_ignored_known_ones_kept() -> None:
    d = {
        "name": "v",
        "future": 1,
        "specialization": [{"name": "x", "index": 2, "type": "i32", "divisibility": 16, "novel": True}],
        "resources": {"registers": 40, "novel": 3},
        "cache_hit": True,
    }
    v = VariantResult.from_json(d, directory="/d")
    assert v.specialization == [ArgSpec(name="x", index=2, type="i32", divisibility=16)]
    assert v.resources == Resources(registers=40) and v.cache_hit and v.directory == "/d"
    assert "directory" not in v.to_json() and "future" not in v.to_json()
    assert (
        VariantResult.from_json({"name": "w"}).specialization == []
        and VariantResult.from_json({"name": "w"}).resources == Resources()
    )


def test_argspec_kind_and_summary() -> None:
    assert ArgSpec("n", 0, "constexpr", constexpr="1").kind == "constexpr"
    assert ArgSpec("n", 0, "constexpr", constexpr="1").summary() == "constexpr = 1"
    assert ArgSpec("p", 0, "*fp16", divisibility=16).kind == "pointer"
    assert ArgSpec("p", 0, "*fp16", divisibility=16).summary() == "*fp16 div16"
    assert ArgSpec("s", 0, "i32").kind == "scalar" and ArgSpec("s", 0, "i32").summary() == "i32"
    assert ArgSpec("s", 0, "i64", divisibility=8).summary() == "i64 div8"


def test_compiled_variant_errors_name_what_is_there() -> None:
    b = Bundle(
        suite="s",
        target="sm90",
        variants={"ok": VariantResult("ok"), "bad": VariantResult("bad", error="\n  E1: boom\nmore")},
    )
    assert b.compiled_variant("ok").name == "ok"
    with pytest.raises(BundleError, match=r"^variant 'nope' is not in the bundle \(it has: ok, bad\)$"):
        b.compiled_variant("nope")
    b.directory = "/x/y"
    with pytest.raises(BundleError, match=r"^variant 'nope' is not in the bundle /x/y \(it has: ok, bad\)$"):
        b.compiled_variant("nope")
    with pytest.raises(BundleError, match=r"^variant 'bad' failed to compile: E1: boom$"):
        b.compiled_variant("bad")
    with pytest.raises(BundleError, match=r"it has: none\)$"):
        Bundle(suite="s", target="t").compiled_variant("a")
    b.variants["blank"] = VariantResult("blank", error="   ")
    with pytest.raises(BundleError, match=r"^variant 'blank' failed to compile:    $"):
        b.compiled_variant("blank")


def test_variant_dirname_never_a_path_and_never_shared() -> None:
    assert B.variant_dirname("annotated") == "annotated"
    assert B.variant_dirname("a_b@c+d=e,f.g-h") == "a_b@c+d=e,f.g-h"
    assert B.variant_dirname("x" * 120) == "x" * 120
    long = B.variant_dirname("x" * 121)
    assert long.startswith("x" * 100 + "-") and len(long) == 109
    odd = B.variant_dirname("a/b")
    assert odd.startswith("a_b-") and len(odd) == len("a_b-") + 8 and odd != B.variant_dirname("a_b")
    assert B.variant_dirname("a/b") != B.variant_dirname("a\\b")
    for name in (".", "..", ".hidden", "../up", "/abs", "~", "é"):
        d = B.variant_dirname(name)
        assert "/" not in d and not d.startswith(".") and d not in (".", "..")
    assert B.variant_dirname("..").startswith("variant-") and B.variant_dirname(".hidden").startswith("hidden-")
    assert B.variant_dirname("\udcff").startswith("_-")  # a lone surrogate hashes too


def test_confined(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f").write_text("x")
    assert B.confined(tmp_path / "in", "f") == tmp_path / "in" / "f"
    assert B.confined(tmp_path / "in", ".") == tmp_path / "in" / "."
    for bad in ("/etc/passwd", "~/x", "../x", "a/../../x", ""):
        with pytest.raises(BundleError, match="refusing the path"):
            B.confined(tmp_path / "in", bad)
    os.symlink(tmp_path, tmp_path / "in" / "up")
    with pytest.raises(BundleError, match=r"refusing 'up/f': it leads outside the bundle \(to "):
        B.confined(tmp_path / "in", "up/f")
    for bad in ("/abs", "up/f"):  # control characters of a bundle's path never reach the terminal
        with pytest.raises(BundleError, match="x\ufffdy") as e:
            B.confined(tmp_path / "x\x1b[2Jy", bad) if bad == "/abs" else B.confined(tmp_path / "in", "up/x\x1b[2Jy")
        assert "\x1b" not in str(e.value)


def _write_variant(root: Path, name: str, **rec: object) -> Path:
    d = root / B.variant_dirname(name)
    d.mkdir(parents=True)
    (d / "variant.json").write_text(json.dumps({"name": name, **rec}))
    return d


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("{", r"variant\.json: not valid JSON: "),
        ('{"name": 3}', r"variant\.json: malformed record at name: 3 is not of type 'string'$"),
        (
            '{"name": "v", "stages": {"ttir": "../x"}}',
            r"malformed record at stages/ttir: '\.\./x' is not a relative path inside the bundle \(",
        ),
        (
            '{"name": "v", "passes": ["' + "p" * 70 + '/"]}',
            r"malformed record at passes/0: '" + "p" * 56 + r"\.\.\. is not a relative path inside the bundle",
        ),
        ('{"kernel": "k"}', r"malformed record at \(top level\): 'name' is a required property$"),
        ('{"name": "v", "kernel": "' + "k" * 300 + '", "resources": {"registers": "' + "r" * 300 + '"}}', r"\.\.\.$"),
    ],
)
def test_bad_variant_records_give_one_line_errors(tmp_path: Path, record: str, message: str) -> None:
    d = tmp_path / "v"
    d.mkdir()
    (d / "variant.json").write_text(record)
    with pytest.raises(BundleError, match=message) as e:
        B.load_variant_dir(d)
    assert "\n" not in str(e.value) and str(e.value).startswith(str(d / "variant.json"))
    if message.endswith(r"\.\.\.$"):
        assert len(str(e.value).split("malformed record at resources/registers: ")[1]) == 160


def test_load_errors(tmp_path: Path, recorded: Path) -> None:
    with pytest.raises(BundleError, match=r"is not an irdiff bundle \(no manifest\.json\)$"):
        B.load_bundle(tmp_path / "none")
    with pytest.raises(BundleError, match=r"is not an irdiff variant directory \(no variant\.json\)$"):
        B.load_variant_dir(tmp_path)
    (tmp_path / "unreadable.json").mkdir()
    with pytest.raises(BundleError, match=r"unreadable\.json: cannot read the manifest: Is a directory$"):
        B.read_record(tmp_path / "unreadable.json", B.MANIFEST_SCHEMA, "manifest")
    mf = recorded / "manifest.json"
    m = json.loads(mf.read_text())
    for schema, shown in (("irdiff.bundle/2", "'irdiff.bundle/2'"), ("other/1", "'other/1'"), ("", "'\\(none\\)'")):
        mf.write_text(json.dumps({**m, "schema": schema}))
        with pytest.raises(
            BundleError, match=rf"bundle schema {shown} is not supported \(this irdiff reads irdiff\.bundle/1\)"
        ):
            B.load_bundle(recorded)
    mf.write_text(json.dumps({k: v for k, v in m.items() if k != "schema"}))
    with pytest.raises(BundleError, match="'schema' is a required property"):
        B.load_bundle(recorded)
    mf.write_text(json.dumps({"schema": B.SCHEMA}))  # every other field optional
    b = B.load_bundle(recorded)
    assert (b.suite, b.target, b.triton_version, b.ptxas_version, b.created) == ("", "", "", "", "")
    assert (b.command, b.shape, b.variants, b.pair, b.runs) == ([], {}, {}, [], {})
    mf.write_text(json.dumps({**m, "variants": ["annotated", "gone"]}))
    with pytest.raises(BundleError, match=r"gone is not an irdiff variant directory"):
        B.load_bundle(recorded)
    shutil.rmtree(recorded / "unannotated")
    os.symlink(recorded / "annotated", recorded / "unannotated")
    mf.write_text(json.dumps(m))
    assert B.load_bundle(recorded).variants["unannotated"].name == "annotated"  # a link inside the bundle is fine
    (recorded / "unannotated").unlink()
    os.symlink(tmp_path / "elsewhere", recorded / "unannotated")
    with pytest.raises(BundleError, match="leads outside the bundle"):
        B.load_bundle(recorded)


def test_record_with_wrong_types_inside_gives_bundle_error(tmp_path: Path) -> None:
    d = _write_variant(tmp_path, "v", specialization=[{"name": "x", "index": 0, "type": "i32"}], resources={})
    assert B.load_variant_dir(d).specialization == [ArgSpec("x", 0, "i32")]
    (d / "variant.json").write_text(json.dumps({"name": "v", "resources": []}))
    with pytest.raises(BundleError, match="malformed record at resources"):
        B.load_variant_dir(d)


def test_save_writes_records_and_merges_another_writers_work(tmp_path: Path) -> None:
    root = tmp_path / "b"
    b = Bundle(
        suite="s",
        target="sm90",
        variants={"a/1": VariantResult("a/1", metadata={"cache_key": "k1"})},
        pair=["a/1"],
        runs={"r1": 1},
        directory=str(root),
    )
    b.save()
    assert B.load_bundle(root).manifest() == b.manifest()
    assert (root / B.variant_dirname("a/1") / "variant.json").is_file() and not (root / "a").exists()
    # Another process adds a variant and a run; this stale copy saves later: both stay.
    other = B.load_bundle(root)
    other.variants["c"] = VariantResult("c", directory=str(root / "c"))
    other.runs = {"r2": 2}
    other.save()
    b.runs = {"r1": 10}
    b.save()
    back = B.load_bundle(root)
    assert list(back.variants) == ["a/1", "c"] and back.runs == {"r1": 10, "r2": 2}
    # A name listed on disk whose directory is gone, or that is not a string, is not carried over.
    m = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps({**m, "variants": ["a/1", "c", "ghost", 7], "runs": []}))
    b.save()
    m2 = json.loads((root / "manifest.json").read_text())
    assert m2["variants"] == ["a/1", "c"] and m2["runs"] == {"r1": 10}
    # A manifest of another schema, or not an object, contributes nothing.
    (root / "manifest.json").write_text(json.dumps({**m, "schema": "irdiff.bundle/0"}))
    b.save()
    assert json.loads((root / "manifest.json").read_text())["variants"] == ["a/1"]
    (root / "manifest.json").write_text("[1]")
    b.save()
    assert json.loads((root / "manifest.json").read_text())["variants"] == ["a/1"]
    (root / "manifest.json").write_text("{")
    b.save()
    assert json.loads((root / "manifest.json").read_text())["runs"] == {"r1": 10}
    assert not [p for p in root.iterdir() if p.name.startswith(B.TMP_PREFIX)]


def test_save_keeps_a_record_another_compile_installed(tmp_path: Path) -> None:
    root = tmp_path / "b"
    v = VariantResult("v", kernel="mine", metadata={"cache_key": "k1"})
    b = Bundle(suite="s", target="t", variants={"v": v}, directory=str(root))
    b.save()
    vj = root / "v" / "variant.json"
    assert json.loads(vj.read_text())["kernel"] == "mine"
    vj.write_text(json.dumps({"name": "v", "kernel": "theirs", "metadata": {"cache_key": "k2"}}))
    b.save()
    assert json.loads(vj.read_text())["kernel"] == "theirs"  # another compile: its record stays
    vj.write_text(json.dumps({"name": "v", "kernel": "same", "metadata": {"cache_key": "k1"}}))
    b.save()
    assert json.loads(vj.read_text())["kernel"] == "mine"  # the same compile: rewritten
    for junk in ("{", "[]", json.dumps({"name": "v"})):  # unreadable or keyless record on disk: rewritten
        vj.write_text(junk)
        b.save()
        assert json.loads(vj.read_text())["kernel"] == "mine"
    v.metadata = {}
    vj.write_text(json.dumps({"name": "v", "kernel": "theirs", "metadata": {"cache_key": "k2"}}))
    b.save()
    assert json.loads(vj.read_text())["kernel"] == "mine"  # no key of its own: nothing to compare, written


def test_atomic_write_text_bytes_and_failure(tmp_path: Path) -> None:
    p = tmp_path / "f"
    B.atomic_write(p, "text é")
    assert p.read_text() == "text é"
    B.atomic_write(p, b"\x00\xff")
    assert p.read_bytes() == b"\x00\xff"
    with pytest.raises(TypeError):
        B.atomic_write(p, 3)  # type: ignore[arg-type]
    assert p.read_bytes() == b"\x00\xff" and sorted(x.name for x in tmp_path.iterdir()) == ["f"]
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        B.atomic_write(tmp_path / "d", "x")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["d", "f"]


def test_bundle_lock_one_per_path_timeout_from_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "sub" / "b"
    lock = B.bundle_lock(root, timeout=2)
    assert lock.lock_file == str(tmp_path / "sub" / ".b.lock") and lock.timeout == 2 and root.parent.is_dir()
    assert B.bundle_lock(str(root)) is lock and lock.timeout == B.LOCK_TIMEOUT_S
    monkeypatch.setenv("IRDIFF_LOCK_TIMEOUT", "7.5")
    assert B.bundle_lock(root).timeout == 7.5
    monkeypatch.setenv("IRDIFF_LOCK_TIMEOUT", "")
    assert B.bundle_lock(root).timeout == B.LOCK_TIMEOUT_S
    with B.bundle_lock(root) as held:
        assert held is lock and lock.is_locked
        with B.bundle_lock(root):  # reentrant in one thread
            assert lock.is_locked
        assert lock.is_locked
    assert not lock.is_locked
    assert B.bundle_lock(tmp_path / "other") is not lock


def test_bundle_lock_timeout_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "b"
    # The lock class is built once per process (irdiff.bundle._LOCK_CLASS): build it afresh here, so that this
    # test checks the class bundle_lock makes now, not one an earlier test made (mutation testing forks every
    # mutant from a process whose cache already holds the original class).
    monkeypatch.setattr(B, "_LOCK_CLASS", [])
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from irdiff.bundle import bundle_lock\nimport time\nwith bundle_lock({str(root)!r}):\n print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(
            BundleError, match=r"\.b\.lock: another irdiff process has been writing this bundle for 0 s$"
        ):
            with B.bundle_lock(root, timeout=0.2):
                pass
    finally:
        holder.kill()
        holder.wait()


# A child that sleeps with every signal at its default action: one started under ``nohup`` (as mutation runs are)
# would otherwise inherit SIGHUP ignored, and a probe that sends a real signal could not be told from signal 0.
_SLEEP = """
import signal, time
for s in signal.valid_signals():
    try:
        signal.signal(s, signal.SIG_DFL)
    except (OSError, ValueError):
        pass
print("ready", flush=True)
time.sleep(60)
"""


def _sleeper() -> subprocess.Popen[bytes]:
    """The sleeping child, once its signals are reset (it says so on stdout)."""
    child = subprocess.Popen([sys.executable, "-c", _SLEEP], stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    return child


def test_temporaries_are_named_for_their_process_and_reclaimed(tmp_path: Path) -> None:
    """Temporaries of a dead process (a directory, a file) and one of a live process older than STALE_TMP_S are
    removed; a young one of a live process, this process's own and a name without the prefix stay. The live owner
    is a child of this test, never this process, its parent or pid 1: the probe is signal 0, and the child is
    still running after every probe (a probe with a real signal, e.g. SIGHUP, ends it)."""
    t = B.tmp_dir_in(tmp_path / "p", "a/b c" + "x" * 50)
    assert t.is_dir() and t.parent == tmp_path / "p"
    assert t.name.startswith(f".tmp-{os.getpid()}-a_b_c{'x' * 35}-")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    live = _sleeper()
    try:
        assert not B._pid_alive(pid) and B._pid_alive(live.pid)
        gone_dir = tmp_path / "p" / f".tmp-{pid}-x"
        gone_dir.mkdir()
        (gone_dir / "f").write_text("x")
        gone_file = tmp_path / "p" / f".tmp-{pid}-y"
        gone_file.write_text("x")
        old_live = tmp_path / "p" / f".tmp-{live.pid}-old"
        old_live.mkdir()
        long_ago = time.time() - B.STALE_TMP_S - 60
        os.utime(old_live, (long_ago, long_ago))
        young_live = tmp_path / "p" / f".tmp-{live.pid}-young"
        young_live.mkdir()
        other = tmp_path / "p" / f"tmp-{pid}-kept"
        other.mkdir()
        mine = B.tmp_dir_in(tmp_path / "p")
        removed = B.reclaim_temporaries(tmp_path / "p")
        assert sorted(removed) == sorted([gone_dir, gone_file, old_live])
        assert not gone_dir.exists() and not gone_file.exists() and not old_live.exists()
        assert young_live.is_dir() and other.is_dir() and mine.is_dir() and t.is_dir()
        assert B.reclaim_temporaries(tmp_path / "missing") == []
        time.sleep(0.2)
        assert live.poll() is None  # probed with signal 0 only
    finally:
        live.kill()
        live.wait()


def test_remove_path_never_follows_links(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("k")
    link = tmp_path / "link"
    os.symlink(target, link)
    B.remove_path(link)
    assert not link.is_symlink() and (target / "keep").is_file()
    f = tmp_path / "f"
    f.write_text("x")
    B.remove_path(f)
    assert not f.exists()
    B.remove_path(target)
    assert not target.exists()
    B.remove_path(tmp_path / "missing")  # fine


@pytest.mark.parametrize("old", ["dir", "file", "link", "none", "empty"])
def test_install_dir_replaces_whatever_is_there(tmp_path: Path, old: str) -> None:
    new = tmp_path / "new"
    new.mkdir()
    (new / "v").write_text("new")
    dest = tmp_path / "dest"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    if old == "dir":
        dest.mkdir()
        (dest / "v").write_text("old")
    elif old == "file":
        dest.write_text("old")
    elif old == "link":
        os.symlink(outside, dest)
    elif old == "empty":
        dest.mkdir()
    B.install_dir(new, dest)
    assert (dest / "v").read_text() == "new" and not dest.is_symlink() and not new.exists()
    assert (outside / "keep").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dest", "outside"]


def test_install_dir_without_exchange_renames_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(B, "_exchange", lambda a, b: False)
    new, dest = tmp_path / "new", tmp_path / "dest"
    new.mkdir()
    (new / "v").write_text("new")
    dest.mkdir()
    (dest / "v").write_text("old")
    aside = tmp_path / f".tmp-{os.getpid()}-old-dest"
    aside.write_text("stale leftover")
    B.install_dir(new, dest)
    assert (dest / "v").read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["dest"]


def test_install_dir_other_errors_propagate(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        B.install_dir(tmp_path / "absent", tmp_path / "dest")


def test_exchange_swaps_or_raises(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("A")
    b.mkdir()
    assert B._exchange(a, b) is True
    assert a.is_dir() and b.read_text() == "A"
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "none")):
        B._exchange(a, tmp_path / "none")


def test_copy_variant_installs_a_copy(tmp_path: Path, recorded: Path) -> None:
    src = B.load_bundle(recorded).variants["annotated"]
    os.symlink("/nonexistent", recorded / "annotated" / "dangling")
    dest = tmp_path / "out" / "annotated"
    dest.mkdir(parents=True)
    (dest / "stale").write_text("old")
    v = B.copy_variant(src, dest)
    assert v.directory == str(dest) and v.to_json() == src.to_json() and v.text("ttir") == src.text("ttir")
    assert not (dest / "stale").exists() and (dest / "dangling").is_symlink()  # links copied, not followed
    assert sorted(p.name for p in dest.parent.iterdir()) == ["annotated"]
    broken = VariantResult("x", directory=str(tmp_path / "nowhere"))
    with pytest.raises(FileNotFoundError):
        B.copy_variant(broken, tmp_path / "out" / "x")
    assert sorted(p.name for p in dest.parent.iterdir()) == ["annotated"]  # its temporary is gone


def test_exchange_relative_paths_and_unsupported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a").write_text("A")
    Path("b").mkdir()
    assert B._exchange(Path("a"), Path("b")) is True  # relative to the working directory (AT_FDCWD)
    assert Path("b").read_text() == "A"
    # Moving a directory into its own subdirectory: EINVAL, reported as "no exchange here".
    Path("b2").mkdir()
    (Path("b2") / "sub").mkdir()
    assert B._exchange(Path("b2"), Path("b2") / "sub") is False
    with pytest.raises(FileNotFoundError) as e:
        B._exchange(Path("a"), Path("none"))
    assert e.value.strerror == os.strerror(e.value.errno) and e.value.filename == "none"

    def no_libc(*a: object, **k: object) -> None:
        raise OSError("no libc")

    import ctypes

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert B._exchange(Path("a"), Path("b")) is False


def test_pid_alive_sends_no_signal(tmp_path: Path) -> None:
    child = _sleeper()
    try:
        assert B._pid_alive(child.pid)
        time.sleep(0.2)
        assert child.poll() is None  # probed with signal 0: still running
    finally:
        child.kill()
        child.wait()
    assert not B._pid_alive(child.pid)


def test_atomic_write_goes_through_a_temporary_beside_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = os.replace

    def spy(src: str, dst: object) -> None:
        seen.append(src)
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(B.os, "replace", spy)
    B.atomic_write(tmp_path / "f", "x")
    assert Path(seen[0]).parent == tmp_path and Path(seen[0]).name.startswith(f".tmp-{os.getpid()}-")

    def vanish(src: str, dst: object) -> None:
        os.unlink(src)  # the temporary is gone (reclaimed) before the failure: only the failure is reported
        raise PermissionError("replace failed")

    monkeypatch.setattr(B.os, "replace", vanish)
    with pytest.raises(PermissionError, match="replace failed"):
        B.atomic_write(tmp_path / "g", "x")


def test_temporaries_names_and_nested_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = B.tmp_dir_in(tmp_path / "x" / "y")
    assert t.parent == tmp_path / "x" / "y" and t.name.startswith(f".tmp-{os.getpid()}--")
    assert B.tmp_dir_in(tmp_path, "AbC.z-9").name.startswith(f".tmp-{os.getpid()}-AbC.z-9-")
    made: list[Path] = []
    real = B.install_dir

    def spy(new: Path, dest: Path) -> None:
        made.append(new)
        real(new, dest)

    monkeypatch.setattr(B, "install_dir", spy)
    src = VariantResult("v", directory=str(RECORDED / "annotated"))
    B.copy_variant(src, tmp_path / "out" / "annotated")
    assert made[0].name.startswith(f".tmp-{os.getpid()}-annotated-") and made[0].parent == tmp_path / "out"


def test_save_nested_readable_and_keeps_going(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b"
    theirs = VariantResult("first", metadata={"cache_key": "k1", "where": Path("/p")}, directory=str(root / "first"))
    mine = VariantResult("second", directory=str(root / "deep" / "second"))
    b = Bundle(
        suite="s", target="t", variants={"first": theirs, "second": mine}, runs={"r": Path("/x")}, directory=str(root)
    )
    (root / "first").mkdir(parents=True)
    (root / "first" / "variant.json").write_text(json.dumps({"name": "first", "metadata": {"cache_key": "k2"}}))
    b.save()
    # The first record belongs to another compile and stays; the second is still written after it.
    assert json.loads((root / "first" / "variant.json").read_text())["metadata"] == {"cache_key": "k2"}
    second = (root / "deep" / "second" / "variant.json").read_text()
    assert second.startswith('{\n "name": "second",\n')  # indented one space: readable, diffs line by line
    manifest = (root / "manifest.json").read_text()
    assert manifest.startswith('{\n "schema": "irdiff.bundle/1",\n') and json.loads(manifest)["runs"] == {"r": "/x"}
    theirs.metadata["cache_key"] = "k2"
    b.save()
    assert json.loads((root / "first" / "variant.json").read_text())["metadata"]["where"] == "/p"  # str() of a Path


def _count_validations(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every jsonschema validation :func:`irdiff.bundle.read_record` runs (the real one still runs)."""
    seen: list[Path] = []
    real = B._validate

    def counting(record: object, schema: dict[str, object], where: Path) -> None:
        seen.append(where)
        real(record, schema, where)

    monkeypatch.setattr(B, "_validate", counting)
    return seen


def test_validation_memo_skips_only_the_exact_bytes_seen_valid(
    tmp_path: Path, recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record validated once leaves a marker; the same bytes are not validated again (so a warm run does not
    import jsonschema), but any other bytes are, and a bad record is refused with or without a memo."""
    memo = tmp_path / "memo"
    seen = _count_validations(monkeypatch)
    B.load_bundle(recorded, memo)
    assert len(seen) == 3 and len(list(memo.iterdir())) == 3  # manifest + two variant records
    seen.clear()
    b = B.load_bundle(recorded, memo)
    assert seen == [] and list(b.variants) == ["annotated", "unannotated"]
    assert B.load_bundle(recorded, memo).manifest() == B.load_bundle(recorded).manifest()
    # without a memo: validated, and no marker is written
    seen.clear()
    B.load_bundle(recorded)
    assert len(seen) == 3 and len(list(memo.iterdir())) == 3
    # the same record under another schema is validated again
    seen.clear()
    B.read_record(recorded / "manifest.json", {"type": "object"}, "manifest", memo)
    assert len(seen) == 1
    # an edited record (one byte of whitespace) is validated again; a bad one is refused even though the
    # original's marker is there
    vj = recorded / "annotated" / "variant.json"
    vj.write_bytes(vj.read_bytes() + b" ")
    seen.clear()
    B.load_variant_dir(recorded / "annotated", memo)
    assert seen == [vj]
    rec = json.loads(vj.read_text())
    vj.write_text(json.dumps({**rec, "stages": {"ttir": "../../etc/passwd"}}))
    with pytest.raises(BundleError, match="not a relative path inside the bundle"):
        B.load_variant_dir(recorded / "annotated", memo)
    with pytest.raises(BundleError, match="not a relative path inside the bundle"):
        B.load_variant_dir(recorded / "annotated", memo)  # a refusal leaves no marker


def test_validation_memo_is_bounded_least_recently_used_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo (``<cache>/validated``) never grows past :data:`irdiff.bundle.MEMO_MAX_MARKERS` markers: a new marker
    over the bound removes the least recently used ones (a hit counts as a use) down to three quarters of it, and
    nothing in the directory that is not a marker is touched."""
    monkeypatch.setattr(B, "MEMO_MAX_MARKERS", 8)
    memo = tmp_path / "memo"
    memo.mkdir()
    foreign = {"README": b"mine", "f" * 64: b"not empty", "0" * 63: b"", "g" * 64: b""}
    for name, data in foreign.items():
        (memo / name).write_bytes(data)
        os.utime(memo / name, ns=(0, 0))  # older than any marker: the first to go if it counted as one
    (memo / ("a" * 64)).symlink_to(tmp_path / "nowhere")
    (tmp_path / "empty").write_bytes(b"")
    os.utime(tmp_path / "empty", ns=(0, 0))
    (memo / ("b" * 64)).symlink_to(tmp_path / "empty")  # a link to an old empty file is no marker either
    schema = {"type": "object"}
    seen = _count_validations(monkeypatch)
    records = []
    for k in range(20):
        rec = tmp_path / f"r{k}.json"
        rec.write_text(json.dumps({"k": k}))
        records.append(rec)

    def markers() -> set[str]:
        return {p.name for p in memo.iterdir() if p.name not in foreign and p.name not in ("a" * 64, "b" * 64)}

    def key(k: int) -> str:
        return B._memo_key(schema, records[k].read_bytes())

    for k in range(8):
        B.read_record(records[k], schema, "record", memo)
        os.utime(memo / key(k), ns=(k * 10**9, k * 10**9))  # distinct ages, oldest first
    assert markers() == {key(k) for k in range(8)}
    seen.clear()
    B.read_record(records[0], schema, "record", memo)  # a hit: not validated, and now the most recently used
    assert seen == []
    B.read_record(records[8], schema, "record", memo)  # the ninth marker: down to 6, the oldest go
    assert len(markers()) == 6
    assert key(0) in markers() and key(8) in markers()
    assert key(1) not in markers() and key(2) not in markers() and key(3) not in markers()
    for k in range(9, 20):
        B.read_record(records[k], schema, "record", memo)
        assert len(markers()) <= 8
    for name, data in foreign.items():  # only markers are removed
        assert (memo / name).read_bytes() == data
    assert (memo / ("a" * 64)).is_symlink() and (memo / ("b" * 64)).is_symlink()
    seen.clear()
    B.read_record(records[1], schema, "record", memo)  # a removed marker: validated again, correctly
    assert seen == [records[1]]


def test_validation_memo_is_created_with_its_parents_and_never_follows_a_planted_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memo under a cache directory that does not exist yet is created (parents too) and remembers the record; a
    symlink planted under a marker's name (untrusted cache data) is not followed when the marker is written: nothing
    is created where it points, and the record is validated every time."""
    schema = {"type": "object"}
    rec = tmp_path / "r.json"
    rec.write_text(json.dumps({"k": 1}))
    seen = _count_validations(monkeypatch)
    memo = tmp_path / "fresh" / "cache" / "validated"
    B.read_record(rec, schema, "record", memo)
    B.read_record(rec, schema, "record", memo)
    assert seen == [rec] and (memo / B._memo_key(schema, rec.read_bytes())).is_file()
    other = tmp_path / "other"
    other.mkdir()
    outside = tmp_path / "outside"
    (other / B._memo_key(schema, rec.read_bytes())).symlink_to(outside)
    seen.clear()
    B.read_record(rec, schema, "record", other)
    B.read_record(rec, schema, "record", other)
    assert seen == [rec, rec] and not outside.exists()


@pytest.mark.parametrize("shape", ["symlink", "nonempty", "directory"])
def test_validation_memo_markers_of_another_shape_are_ignored(
    tmp_path: Path, recorded: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """The memo is untrusted cache data: a marker that is a symlink (even to an empty file), has contents or is a
    directory does not count, and the record is validated (and a bad record refused)."""
    memo = tmp_path / "memo"
    memo.mkdir()
    vj = recorded / "annotated" / "variant.json"
    vj.write_text(json.dumps({"name": 7}))  # invalid: name must be a string
    key = B._memo_key(B.VARIANT_SCHEMA, vj.read_bytes())
    if shape == "symlink":
        (tmp_path / "empty").write_bytes(b"")
        (memo / key).symlink_to(tmp_path / "empty")
    elif shape == "nonempty":
        (memo / key).write_text("ok")
    else:
        (memo / key).mkdir()
    with pytest.raises(BundleError, match="malformed record at name"):
        B.load_variant_dir(recorded / "annotated", memo)
    assert (memo / key).exists()  # left as it was found (not replaced by a marker)


def test_validation_memo_that_cannot_be_written_is_only_slower(tmp_path: Path, recorded: Path) -> None:
    (tmp_path / "memo").write_text("a file where the memo directory should be")
    b = B.load_bundle(recorded, tmp_path / "memo")
    assert list(b.variants) == ["annotated", "unannotated"]


def test_bundle_lock_is_shared_by_the_threads_of_its_holder(tmp_path: Path) -> None:
    """One lock per bundle and process, shared by its threads (filelock ``thread_local=False``): a worker thread of
    the process that holds a bundle's lock (the compile pool runs under its caller's lock) enters at once instead of
    waiting on a second ``flock`` of its own process until the timeout; other processes still wait
    (:func:`test_bundle_lock_timeout_message`)."""
    root = tmp_path / "b"
    outcome: list[object] = []

    def worker() -> None:
        try:
            with B.bundle_lock(root, timeout=0.5) as held:
                outcome.append(held.is_locked)
        except BundleError as e:
            outcome.append(str(e))

    with B.bundle_lock(root, timeout=5) as lock:
        t = threading.Thread(target=worker)
        t.start()
        t.join(30)
        assert lock.is_locked  # the worker's exit left the main thread's hold in place
    assert outcome == [True] and not lock.is_locked


def test_validation_memo_key_reads_the_schema_canonically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo key covers the schema as canonical JSON (sorted keys): the same schema written in another key order
    (another irdiff build, a schema assembled differently) finds the marker; a different schema does not."""
    rec = tmp_path / "r.json"
    rec.write_text(json.dumps({"name": "v", "k": 1}))
    memo = tmp_path / "memo"
    first = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "k": {}}}
    reordered = {"properties": {"k": {}, "name": {"type": "string"}}, "required": ["name"], "type": "object"}
    assert list(json.dumps(first)) != list(json.dumps(reordered))
    seen = _count_validations(monkeypatch)
    B.read_record(rec, first, "record", memo)
    B.read_record(rec, reordered, "record", memo)
    assert seen == [rec] and len(list(memo.iterdir())) == 1
    assert B._memo_key(first, rec.read_bytes()) == B._memo_key(reordered, rec.read_bytes())
    B.read_record(rec, {**first, "required": ["k"]}, "record", memo)
    assert seen == [rec, rec] and len(list(memo.iterdir())) == 2


def test_records_with_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    """A record is decoded leniently (``errors="replace"``): bytes that are not UTF-8 inside a string become U+FFFD
    and the record loads; outside a string they make invalid JSON, a one-line error either way (never a decoding
    traceback)."""
    d = tmp_path / "v"
    d.mkdir()
    (d / "variant.json").write_bytes(b'{"name": "v\xff", "kernel": "k\xfe\xfd"}')
    v = B.load_variant_dir(d)
    assert (v.name, v.kernel) == ("v\ufffd", "k\ufffd\ufffd")
    (d / "variant.json").write_bytes(b'{"name": "v"}\xff')
    with pytest.raises(BundleError, match=r"variant\.json: not valid JSON: Extra data: line 1 column 14"):
        B.load_variant_dir(d)


def test_unreadable_records_are_named_in_the_error(tmp_path: Path, recorded: Path) -> None:
    """A record that exists but cannot be used (here a symlink to ``/proc/self/mem``, which irdiff used to follow
    and fail to read with EIO: a symlink is now refused before anything is read) is a one-line error naming which
    record: the manifest, a variant record, or by default a "record"."""
    mem = Path("/proc/self/mem")
    link = "it is a symlink \\(a bundle's records must be plain files in it\\)$"
    (recorded / "annotated" / "variant.json").unlink()
    (recorded / "annotated" / "variant.json").symlink_to(mem)
    with pytest.raises(BundleError, match=rf"annotated/variant\.json: refusing the variant record: {link}"):
        B.load_variant_dir(recorded / "annotated")
    with pytest.raises(BundleError, match=rf"annotated/variant\.json: refusing the variant record: {link}"):
        B.load_bundle(recorded)
    (recorded / "manifest.json").unlink()
    (recorded / "manifest.json").symlink_to(mem)
    with pytest.raises(BundleError, match=rf"rec/manifest\.json: refusing the manifest: {link}"):
        B.load_bundle(recorded)
    with pytest.raises(BundleError, match=rf"rec/manifest\.json: refusing the record: {link}"):
        B.read_record(recorded / "manifest.json", B.MANIFEST_SCHEMA)


def test_records_a_planted_memo_marker_vouches_for_still_fail_in_one_line(tmp_path: Path, recorded: Path) -> None:
    """The memo is untrusted cache data: a marker planted for a record that never passed validation makes
    :func:`irdiff.bundle.read_record` skip the schema, and the readers after it still end in one-line errors: a
    manifest without a schema is an unsupported '(none)' schema, a variant record missing an argument's index and
    type is an unreadable variant record (naming the file)."""
    memo = tmp_path / "memo"
    memo.mkdir()
    mf = recorded / "manifest.json"
    mf.write_text(json.dumps({"suite": "s", "variants": []}))
    (memo / B._memo_key(B.MANIFEST_SCHEMA, mf.read_bytes())).write_bytes(b"")
    with pytest.raises(BundleError, match=r"'schema' is a required property"):
        B.load_bundle(recorded)  # without the memo: validated
    with pytest.raises(BundleError, match=r"rec: bundle schema '\(none\)' is not supported \(this irdiff reads"):
        B.load_bundle(recorded, memo)
    vj = recorded / "annotated" / "variant.json"
    vj.write_text(json.dumps({"name": "v", "specialization": [{"name": "x"}]}))
    (memo / B._memo_key(B.VARIANT_SCHEMA, vj.read_bytes())).write_bytes(b"")
    with pytest.raises(BundleError, match=r"malformed record at specialization/0: 'index' is a required property"):
        B.load_variant_dir(recorded / "annotated")
    with pytest.raises(BundleError, match=r"annotated/variant\.json: unreadable variant record: .*'index'") as e:
        B.load_variant_dir(recorded / "annotated", memo)
    assert "\n" not in str(e.value)


def test_save_with_a_memo_remembers_the_records_it_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Bundle.save(memo)`` reads what it wrote back through the memo: the manifest's and each variant record's exact
    bytes get a marker, so the next reader validates nothing; a record that fails validation is left to that reader
    to report (save does not raise, and no marker vouches for it); without a memo nothing is remembered."""
    root, memo = tmp_path / "b", tmp_path / "memo"
    b = Bundle(suite="s", target="sm90", variants={"v": VariantResult("v", kernel="k")}, directory=str(root))
    b.save()
    assert not memo.exists()
    b.save(memo)
    mf, vj = root / "manifest.json", root / "v" / "variant.json"
    want = {B._memo_key(B.MANIFEST_SCHEMA, mf.read_bytes()), B._memo_key(B.VARIANT_SCHEMA, vj.read_bytes())}
    assert {p.name for p in memo.iterdir()} == want
    seen = _count_validations(monkeypatch)
    assert B.load_bundle(root, memo).variants["v"].kernel == "k" and seen == []
    bad = Bundle(
        suite="s", target="sm90", variants={"w": VariantResult("w", stages={"ttir": "../x"})}, directory=str(root)
    )
    bad.save(memo)  # the bad record is written; reading it back fails inside save, silently
    assert seen == [mf, root / "w" / "variant.json"]
    assert {p.name for p in memo.iterdir()} == want | {B._memo_key(B.MANIFEST_SCHEMA, mf.read_bytes())}
    with pytest.raises(BundleError, match=r"w/variant\.json: malformed record at stages/ttir"):
        B.load_bundle(root, memo)


def test_reclaim_skips_names_it_does_not_own_and_goes_on(tmp_path: Path) -> None:
    """``.tmp-`` names that are not ``.tmp-<pid>-...`` (not irdiff's) are skipped, and the scan goes on: every
    temporary of a dead process is reclaimed whatever the directory order (foreign names first and last)."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    parent = tmp_path / "p"
    parent.mkdir()
    foreign = [".tmp-x", ".tmp-", ".tmp-12x-3", ".tmp--1-", ".tmp-7"]
    gone = []
    for i, name in enumerate(foreign):
        (parent / name).mkdir()
        if i < len(foreign) - 1:
            gone.append(parent / f".tmp-{pid}-{i}")
            gone[-1].mkdir()
    assert sorted(B.reclaim_temporaries(parent)) == sorted(gone)
    assert sorted(p.name for p in parent.iterdir()) == sorted(foreign)


def test_reclaim_goes_on_past_a_temporary_that_vanished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A temporary another writer reclaims between the listing and its ``lstat`` (the race is made to happen: the
    first temporary looked at is removed just before it is examined) is skipped, and the others are still reclaimed."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    parent = tmp_path / "p"
    parent.mkdir()
    tmps = [parent / f".tmp-{pid}-{i}" for i in range(4)]
    for t in tmps:
        t.mkdir()
    vanished: list[Path] = []
    real_lstat = Path.lstat

    def racing_lstat(self: Path) -> os.stat_result:
        if self.parent == parent and not vanished:
            vanished.append(self)
            self.rmdir()  # the other writer wins the race
        return real_lstat(self)

    monkeypatch.setattr(Path, "lstat", racing_lstat)
    removed = B.reclaim_temporaries(parent)
    monkeypatch.undo()
    assert len(vanished) == 1 and sorted(removed) == sorted(set(tmps) - set(vanished))
    assert list(parent.iterdir()) == []


def test_reclaim_age_is_strictly_older_than_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A temporary of a live process (this one) is reclaimed only when OLDER than ``STALE_TMP_S`` (its pid may have
    been reused): exactly that old it stays, one second older it goes (the clock is fixed for the check)."""
    parent = tmp_path / "p"
    parent.mkdir()
    base_s = 1_700_000_000
    exact, older = parent / f".tmp-{os.getpid()}-exact", parent / f".tmp-{os.getpid()}-older"
    exact.mkdir()
    older.mkdir()
    os.utime(exact, ns=(base_s * 10**9, base_s * 10**9))
    os.utime(older, ns=((base_s - 1) * 10**9, (base_s - 1) * 10**9))
    monkeypatch.setattr(B.time, "time", lambda: base_s + B.STALE_TMP_S)
    removed = B.reclaim_temporaries(parent)
    monkeypatch.undo()
    assert removed == [older] and exact.is_dir() and not older.exists()


def test_validate_cuts_a_shown_value_over_60_and_a_message_over_160_characters() -> None:
    """The one-line error of a bad field quotes the value (``repr``) in full up to 60 characters and cuts it to 57
    plus ``...`` above; the whole message is kept up to 160 characters and cut to 157 plus ``...`` above."""
    where = Path("/b/variant.json")
    pattern = {"properties": {"a": {"pattern": "^y+$"}}}
    integer = {"properties": {"a": {"type": "integer"}}}

    def error(value: str, schema: dict[str, object]) -> str:
        with pytest.raises(BundleError) as e:
            B._validate({"a": value}, schema, where)
        prefix = f"{where}: malformed record at a: "
        assert str(e.value).startswith(prefix)
        return str(e.value)[len(prefix) :]

    assert error("x" * 58, pattern) == f"'{'x' * 58}' has an unexpected form"  # repr: 60 characters, shown whole
    assert error("x" * 59, pattern) == f"'{'x' * 56}... has an unexpected form"  # 61: cut
    assert error("x" * 133, integer) == f"'{'x' * 133}' is not of type 'integer'"  # a message of 160 characters
    assert error("x" * 134, integer) == f"'{'x' * 134}' is not of type 'integer'"[:157] + "..."  # 161: cut


def test_variant_dirname_keeps_capitals_and_leading_letters_of_an_unsafe_name() -> None:
    """The readable part of an unsafe name keeps its letters, capitals and a leading ``X`` included: only characters
    outside ``[A-Za-z0-9_@+=,.-]`` become ``_`` and only leading dots go."""
    import hashlib

    assert B.variant_dirname("Xa/B") == "Xa_B-" + hashlib.sha256(b"Xa/B").hexdigest()[:8]


def test_from_json_without_a_directory_has_none() -> None:
    assert VariantResult.from_json({"name": "v"}).directory == ""
    assert VariantResult.from_json({"name": "v"}, "/b/v").directory == "/b/v"


def test_text_of_a_stage_that_is_not_utf8_replaces_the_bad_bytes(tmp_path: Path) -> None:
    """A stage file with bytes that are not UTF-8 (a cut or foreign file) reads with U+FFFD in their place."""
    (tmp_path / "k.ttir").write_bytes(b"tt.func @k\xff\xfe() {\n")
    v = VariantResult("v", stages={"ttir": "k.ttir"}, directory=str(tmp_path))
    assert v.text("ttir") == "tt.func @k\ufffd\ufffd() {\n"


def test_bundle_lock_and_save_create_missing_grandparents(tmp_path: Path) -> None:
    """A bundle (or its lock) whose parent's parent does not exist yet is created with every missing parent."""
    root = tmp_path / "x" / "y" / "b"
    with B.bundle_lock(root) as lock:
        assert lock.is_locked and (tmp_path / "x" / "y").is_dir() and not root.exists()
    other = tmp_path / "p" / "q" / "b"
    Bundle(suite="s", target="t", directory=str(other)).save()
    assert json.loads((other / "manifest.json").read_text())["suite"] == "s"


def test_exchange_unsupported_by_the_filesystem_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A filesystem without ``RENAME_EXCHANGE`` answers ENOTSUP (EOPNOTSUPP; ENOSYS for a kernel without
    ``renameat2``, EINVAL for a flag it does not know): no exchange, and :func:`irdiff.bundle.install_dir` still
    replaces the directory (rename aside, then into place). The answer is made to happen: ``renameat2`` is swapped
    for one that fails with that errno and moves nothing, as the real call does on such a filesystem."""
    import ctypes

    class NoExchange:
        err = 0

        def __init__(self, *a: object, **k: object) -> None:
            pass

        def renameat2(self, *a: object) -> int:
            ctypes.set_errno(self.err)
            return -1

    monkeypatch.setattr(ctypes, "CDLL", NoExchange)
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("A")
    b.write_text("B")
    new, dest = tmp_path / "new", tmp_path / "dest"
    dest.mkdir()
    for err in (errno.ENOTSUP, errno.ENOSYS, errno.EINVAL):
        NoExchange.err = err
        assert B._exchange(a, b) is False
        assert a.read_text() == "A" and b.read_text() == "B"
        (dest / "old").write_text("old")  # not empty: a plain rename onto it fails, the exchange is tried
        new.mkdir()
        (new / "v").write_text(f"new {err}")
        B.install_dir(new, dest)
        assert sorted(p.name for p in dest.iterdir()) == ["v"] and (dest / "v").read_text() == f"new {err}"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "dest"]
    NoExchange.err = errno.EPERM  # any other answer is a real error
    with pytest.raises(PermissionError, match=str(b)):
        B._exchange(a, b)


def test_pid_alive_of_another_users_process() -> None:
    """A live process of another user answers signal 0 with EPERM: it is alive (its temporaries are kept). Run as
    root, a forked child drops to ``nobody`` (uid 65534) and probes this process; run as another user, pid 1 (owned
    by root) is probed."""
    if os.geteuid() != 0:
        if os.stat("/proc/1").st_uid == os.geteuid():
            pytest.skip("pid 1 is this user's own process here")
        assert B._pid_alive(1)
        return
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    # probed here too (a pid that is gone, so no probe can harm it): mutation testing (mutmut) runs a test against
    # a function's mutants only when the test's own process called that function, and the probe that matters below
    # runs in a forked child
    assert not B._pid_alive(gone.pid)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 2
        try:
            os.setgid(65534)
            os.setuid(65534)
            try:
                os.kill(parent, 0)
                code = 3  # not refused: the probe below would prove nothing
            except PermissionError:
                code = 0 if B._pid_alive(parent) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_bound_memo_goes_on_past_a_marker_that_vanished(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A marker another process prunes between the listing and its ``lstat`` (the race is made to happen: the first
    marker looked at is removed just before it is examined) is skipped, and the others are still counted: six
    markers over a bound of 4 lose the vanished one and then the two oldest of the rest, down to 3."""
    memo = tmp_path / "memo"
    memo.mkdir()
    names = [f"{k:x}" * 64 for k in range(6)]
    for k, name in enumerate(names):
        (memo / name).write_bytes(b"")
        os.utime(memo / name, ns=(k * 10**9, k * 10**9))  # distinct ages, names[0] oldest
    vanished: list[str] = []
    real_scandir = os.scandir

    class Racing:
        def __init__(self, path: Path) -> None:
            self.it = real_scandir(path)

        def __enter__(self) -> Racing:
            return self

        def __exit__(self, *exc: object) -> None:
            self.it.close()

        def __iter__(self):  # type: ignore[no-untyped-def]
            for e in self.it:
                if not vanished:
                    vanished.append(e.name)
                    os.unlink(e.path)  # the other process wins the race
                yield e

    monkeypatch.setattr(os, "scandir", Racing)
    B._bound_memo(memo, 4)
    monkeypatch.undo()
    rest = [n for n in names if n not in vanished]
    assert len(vanished) == 1 and sorted(p.name for p in memo.iterdir()) == sorted(rest[2:])


def test_record_files_are_never_read_through_a_symlink(tmp_path: Path, recorded: Path) -> None:
    """``manifest.json`` and ``variant.json`` must be plain files of the bundle: a symlink (to a file outside the
    bundle, to another bundle's valid record, dangling, or pointing inside) is refused with one line, with or
    without a validation memo (a memo hit on the link target's bytes must not let it in); a FIFO is refused
    without blocking. ``Bundle.save`` replaces such a link and neither reads nor writes its target."""
    memo = tmp_path / "memo"
    genuine = tmp_path / "genuine"
    shutil.copytree(recorded, genuine)
    B.load_bundle(genuine, memo)  # its records are now remembered as valid
    outside = tmp_path / "outside.json"
    outside.write_bytes((genuine / "manifest.json").read_bytes())
    mf = recorded / "manifest.json"
    for target in (outside, genuine / "manifest.json", tmp_path / "missing.json", Path("annotated/variant.json")):
        mf.unlink()
        mf.symlink_to(target)
        for m in (memo, None):
            with pytest.raises(BundleError) as e:
                B.load_bundle(recorded, m)
            assert (
                str(e.value)
                == f"{mf}: refusing the manifest: it is a symlink (a bundle's records must be plain files in it)"
            )
    mf.unlink()
    os.mkfifo(mf)
    with pytest.raises(BundleError, match=r"manifest.json: refusing the manifest: it is not a plain file$"):
        B.load_bundle(recorded, memo)
    mf.unlink()
    shutil.copy(genuine / "manifest.json", mf)
    assert list(B.load_bundle(recorded, memo).variants) == ["annotated", "unannotated"]
    vj = recorded / "unannotated" / "variant.json"
    vj.unlink()
    vj.symlink_to(genuine / "unannotated" / "variant.json")
    for m in (memo, None):
        with pytest.raises(BundleError, match=r"variant.json: refusing the variant record: it is a symlink"):
            B.load_bundle(recorded, m)
        with pytest.raises(BundleError, match=r"variant.json: refusing the variant record: it is a symlink"):
            B.load_variant_dir(recorded / "unannotated", m)
    # a writer replaces the links (manifest and record) by plain files; the targets are left as they were
    vj.unlink()
    shutil.copy(genuine / "unannotated" / "variant.json", vj)
    b = B.load_bundle(recorded)
    mf.unlink()
    mf.symlink_to(outside)
    before = outside.read_bytes()
    b.runs = {"x": {}}
    b.save()
    assert not mf.is_symlink() and outside.read_bytes() == before
    assert B.load_bundle(recorded).runs == {"x": {}}


def test_validation_memo_is_not_fooled_by_a_tampered_bundle(tmp_path: Path, recorded: Path) -> None:
    """The memo's markers are keyed on a record's exact bytes (sha256 with the schema and memo version), not on
    its path, size, mtime or inode: a manifest edited in place after a memo'd load, keeping its size, mtime and
    inode, is validated again and refused; so is the same edit in a copy of the bundle elsewhere."""
    memo = tmp_path / "memo"
    B.load_bundle(recorded, memo)
    markers = sorted(p.name for p in memo.iterdir())
    mf = recorded / "manifest.json"
    st = os.stat(mf)
    data = mf.read_bytes()
    assert b'"suite": "matmul"' in data
    tampered = data.replace(b'"suite": "matmul"', b'"suite": 12345678')
    assert len(tampered) == len(data)
    with open(mf, "r+b") as f:
        f.write(tampered)
    os.utime(mf, ns=(st.st_atime_ns, st.st_mtime_ns))
    st2 = os.stat(mf)
    assert (st2.st_ino, st2.st_size, st2.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
    with pytest.raises(
        BundleError, match=r"manifest.json: malformed record at suite: 12345678 is not of type 'string'"
    ):
        B.load_bundle(recorded, memo)
    copy = tmp_path / "copy"
    shutil.copytree(recorded, copy)
    with pytest.raises(BundleError, match=r"malformed record at suite"):
        B.load_bundle(copy, memo)
    assert sorted(p.name for p in memo.iterdir()) == markers  # a refused record leaves no marker
    mf.write_bytes(data)
    assert B.load_bundle(recorded, memo).suite == "matmul"


def test_read_bytes_messages_missing_and_symlink_loop(tmp_path: Path) -> None:
    """``_read_bytes``'s one-line messages, exactly: a record that is not there (ENOENT: "cannot read", with the
    OS's words, not the ``[Errno 2] ...`` repr), and one reached through a symlink loop in its directory (ELOOP, the
    path itself no link: still refused as a symlink, not "cannot read")."""
    gone = tmp_path / "manifest.json"
    with pytest.raises(BundleError) as e:
        B._read_bytes(gone, "manifest")
    assert str(e.value) == f"{gone}: cannot read the manifest: {os.strerror(errno.ENOENT)}"
    os.symlink("loop", tmp_path / "loop")
    looped = tmp_path / "loop" / "variant.json"
    with pytest.raises(BundleError) as e:
        B._read_bytes(looped, "variant record")
    assert str(e.value) == (
        f"{looped}: refusing the variant record: it is a symlink (a bundle's records must be plain files in it)"
    )


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux /proc/self/mem")
def test_read_bytes_message_when_a_plain_file_cannot_be_read() -> None:
    """A plain file whose read fails (Linux ``/proc/self/mem``: a regular file; reading at offset 0, an unmapped
    address, fails with EIO) is reported as "cannot read" with the OS's words, in one line."""
    with pytest.raises(BundleError) as e:
        B._read_bytes(Path("/proc/self/mem"), "manifest")
    assert str(e.value) == f"/proc/self/mem: cannot read the manifest: {os.strerror(errno.EIO)}"
