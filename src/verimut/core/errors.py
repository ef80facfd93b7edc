"""The one error type a user sees: bad input, reported in one line with exit code 2."""


class AuditError(Exception):
    """Something the user asked for cannot be audited. The message is shown as it is."""


class BenchmarkCrash(Exception):
    """The benchmark's own process failed (died, hung past its timeout, or raised) during a cell."""


class InfrastructureError(BenchmarkCrash):
    """The machinery under the benchmark failed, not its code: a benchmark process killed by a signal, a browser
    that closed. The cell is scored again: once more in the run, and on every rerun until it scores."""


class Machinery(str):
    """The reason a cell could not be finished, when it is the machinery's (see InfrastructureError): a pool
    worker killed by a signal. A plain str reason (a timeout, a worker that exited) is the benchmark's own."""


__all__ = ["AuditError", "BenchmarkCrash", "InfrastructureError", "Machinery"]
