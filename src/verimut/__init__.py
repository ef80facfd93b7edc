"""verimut: audit the task verifiers of agent benchmarks for false accepts.

The package's face: what an adapter imports (the run's vocabulary, the Benchmark protocol and its capabilities,
the one error a user sees). The public API, `audit`, `swap` and `repair`, is `verimut.api` (docs/api.md): the
repair's stage is the package `verimut.repair`, so the function cannot also be `verimut.repair`. Everything else
lives in the stage that owns it (docs/layout.md) and is not promised to stay where it is.
"""

from __future__ import annotations

from verimut.core.benchmark import (
    CAPABILITIES,
    CONTRACTS,
    EFFECT,
    GOAL,
    Benchmark,
    Closes,
    DescribesForms,
    Explains,
    Forks,
    Kinds,
    Locates,
    PageWrites,
    Patches,
    ReadsTrace,
    Swaps,
)
from verimut.core.errors import AuditError, BenchmarkCrash
from verimut.core.forms import FormFacts, FormField
from verimut.core.run import Action, AnswerChannel, Run, Step, Verdict

__version__ = "0.4.0"

__all__ = [
    "CAPABILITIES",
    "CONTRACTS",
    "EFFECT",
    "GOAL",
    "Action",
    "AnswerChannel",
    "AuditError",
    "Benchmark",
    "BenchmarkCrash",
    "Closes",
    "DescribesForms",
    "Explains",
    "Forks",
    "FormFacts",
    "FormField",
    "Kinds",
    "Locates",
    "PageWrites",
    "Patches",
    "ReadsTrace",
    "Run",
    "Step",
    "Swaps",
    "Verdict",
    "__version__",
]
