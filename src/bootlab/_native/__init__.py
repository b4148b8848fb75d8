"""Compiled helpers, built by `make build` (this directory's Makefile); every user keeps a
pure Python path for when they are not built."""
