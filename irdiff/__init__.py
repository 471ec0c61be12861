"""irdiff: compile Triton kernel variants for any GPU target, diff every IR stage, and explain the differences."""

__version__ = "0.1.0"
