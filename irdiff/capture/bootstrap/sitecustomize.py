"""irdiff capture bootstrap, imported by Python's ``site`` at start-up of every process of the captured program.

``irdiff capture`` puts this directory first on ``PYTHONPATH`` and sets ``IRDIFF_CAPTURE_*`` variables. At
start-up this file only puts an import watcher on ``sys.meta_path`` (standard library only, well under a
millisecond) and runs the ``sitecustomize`` it shadows (e.g. Debian's ``/etc/python3.X/sitecustomize.py``), if any.
When the process imports ``triton``, right after ``triton/__init__.py`` has run, the watcher:

1. loads the ``irdiff`` package from the path in ``IRDIFF_CAPTURE_PKG`` (explicitly, so that the program's own
   environment — another virtualenv, another Triton — is not shadowed by irdiff's site-packages);
2. calls :func:`irdiff.capture.hooks.install_from_env`.

Failures are reported on stderr in one line; the program always runs.
"""

import os
import sys


def _irdiff_install() -> None:
    pkg = os.environ.get("IRDIFF_CAPTURE_PKG")
    if not pkg:
        return
    try:
        load_irdiff(pkg)
        from irdiff.capture import hooks

        hooks.install_from_env()
    except Exception as e:  # noqa: BLE001 - the program must run even if capture cannot
        sys.stderr.write(f"irdiff capture: hooks not installed: {type(e).__name__}: {e}\n")


def load_irdiff(pkg: str) -> None:
    """Import the ``irdiff`` package from the directory ``pkg`` (no-op when already imported)."""
    if "irdiff" in sys.modules:
        return
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "irdiff", os.path.join(pkg, "__init__.py"), submodule_search_locations=[pkg]
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"no irdiff package at {pkg}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["irdiff"] = module
    spec.loader.exec_module(module)


class TritonImportWatcher:
    """A ``sys.meta_path`` finder that runs a callback right after ``triton/__init__.py`` has executed."""

    def __init__(self, callback):  # type: ignore[no-untyped-def]
        self.callback = callback
        self.busy = False

    def find_spec(self, fullname, path, target=None):  # type: ignore[no-untyped-def]
        if fullname != "triton" or self.busy:
            return None
        import importlib.util

        self.busy = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.busy = False
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module
        watcher = self

        def exec_module(module):  # type: ignore[no-untyped-def]
            original(module)
            try:
                del loader.exec_module
            except AttributeError:
                pass
            if watcher in sys.meta_path:
                sys.meta_path.remove(watcher)
            watcher.callback()

        loader.exec_module = exec_module
        return spec


def _run_shadowed_sitecustomize() -> None:
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None or os.path.abspath(spec.origin or "") == os.path.abspath(__file__):
        return
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - same policy as site.py: report and continue
        sys.stderr.write(f"Error in sitecustomize ({spec.origin}); set PYTHONVERBOSE for traceback:\n{e}\n")


if os.environ.get("IRDIFF_CAPTURE_DIR") and os.environ.get("IRDIFF_CAPTURE_PKG"):
    if "triton" in sys.modules:
        _irdiff_install()
    else:
        sys.meta_path.insert(0, TritonImportWatcher(_irdiff_install))
elif os.environ.get("IRDIFF_CAPTURE_PKG") and os.environ.get("IRDIFF_CAPTURE_LOAD") == "1":
    load_irdiff(os.environ["IRDIFF_CAPTURE_PKG"])  # the after-run step: irdiff from the same place, no hooks
_run_shadowed_sitecustomize()
