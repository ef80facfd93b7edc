"""The one error type a user sees: bad input, reported in one line with exit code 2."""


class AuditError(Exception):
    """Something the user asked for cannot be audited. The message is shown as it is."""


class BenchmarkCrash(Exception):
    """The benchmark's own process failed (died, hung past its timeout, or raised) during a cell."""


__all__ = ["AuditError", "BenchmarkCrash"]
