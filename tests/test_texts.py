"""Stage texts read once per file version (irdiff/diagnose/texts.py), on a copy of the recorded sm86 matmul bundle
(``tests/data/bundles/matmul-sm86``, real Triton output): the same text as ``VariantResult.text``, a file rewritten
in place is read again, a missing or unreadable stage is ``""``, a record naming a file outside its variant raises.
No compile."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from irdiff.bundle import BundleError, VariantResult, load_bundle
from irdiff.diagnose.texts import _read, clear, stage_text

DATA = Path(__file__).parent / "data" / "bundles" / "matmul-sm86"


@pytest.fixture
def variant(tmp_path: Path) -> VariantResult:
    shutil.copytree(DATA, tmp_path / "b")
    clear()
    return load_bundle(tmp_path / "b").variants["annotated"]


def test_same_text_as_the_record_and_read_once(variant: VariantResult) -> None:
    ttir = stage_text(variant, "ttir")
    assert ttir == variant.text("ttir") and "tt.func" in ttir
    assert stage_text(variant, "ptxas") == variant.text("ptxas") and "registers" in stage_text(variant, "ptxas")
    before = _read.cache_info()
    assert stage_text(variant, "ttir") is ttir  # the same object: not read again
    after = _read.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses)
    clear()
    assert _read.cache_info().currsize == 0
    assert stage_text(variant, "ttir") == ttir and _read.cache_info().misses == 1


def test_a_rewritten_file_is_read_again(variant: VariantResult) -> None:
    p = variant.path("ttgir")
    assert p is not None
    old = stage_text(variant, "ttgir")
    p.write_text(old + "// appended\n")  # a new size
    assert stage_text(variant, "ttgir") == old + "// appended\n"
    same_size = old.replace("tt.func", "tt.FUNC", 1) + "// appended\n"
    st = p.stat()
    p.write_text(same_size)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # same size, a new modification time
    assert stage_text(variant, "ttgir") == same_size
    # a new size under the old modification time (coarse timestamps, a copy that keeps them: cp -p, rsync -t)
    st = p.stat()
    p.write_text(old)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_mtime_ns == st.st_mtime_ns and stage_text(variant, "ttgir") == old


def test_missing_unreadable_and_outside(variant: VariantResult) -> None:
    assert stage_text(variant, "sass") == ""  # not in the record
    gone = dataclasses.replace(variant, stages={**variant.stages, "ptx": "kernel.ptx"})
    assert stage_text(gone, "ptx") == ""  # named but never written
    (Path(variant.directory) / "adir").mkdir()
    folder = dataclasses.replace(variant, stages={**variant.stages, "ptx": "adir"})
    assert stage_text(folder, "ptx") == ""  # a directory, not a file
    # a file that vanishes or turns unreadable between stat and open: "" (a directory cannot be opened, even by root)
    assert _read(str(Path(variant.directory) / "adir"), 0, 0) == ""
    outside = dataclasses.replace(variant, stages={**variant.stages, "ttir": "../unannotated/ttir.mlir"})
    with pytest.raises(BundleError):
        stage_text(outside, "ttir")
