"""Compiled helpers, built by `make build` (this directory's Makefile); None for one that
is not built, and every user keeps a pure Python path for that case."""

try:
    from . import dmesgscan
except ImportError:  # not built: the numpy paths read the same, slower
    dmesgscan = None
