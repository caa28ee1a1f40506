"""Imported once by the worker processes' server (:mod:`livemon.io.procs`): numpy, the fits' models and
their numba kernels compiled (or read from numba's cache), so that no worker forked from it loads them again."""

from livemon.rating.ttt import compile_kernels

compile_kernels()
