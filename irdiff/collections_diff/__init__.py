"""Diffing two kernel collections: ``irdiff capture`` directories, Triton cache directories (``~/.triton/cache``) or
``TRITON_KERNEL_DUMP`` directories.

:mod:`~irdiff.collections_diff.artifacts` opens Triton cache and dump directories as bundles;
:mod:`~irdiff.collections_diff.pairing` pairs the kernels of the two sides (same name, fused ops, similar source);
:mod:`~irdiff.collections_diff.compare` opens each side as a bundle, runs every pair through the pipeline and renders
the overview. :mod:`irdiff.capture` only records; this package reads what it (or Triton) wrote.
"""
