"""How cells get scored: in this process (`inprocess`), in forked worker processes (`pool`), in Ray actors (`ray`).

Each implements `verimut.engine.executor.Executor` and is registered there by name; the pool and Ray drive their
workers with one loop (`drive`).
"""
