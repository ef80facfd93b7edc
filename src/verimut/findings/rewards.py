"""What a run earns under RL reward formulas computed from a verifier's checks.

A formula takes the run's check results (name -> passed), the same checks on the task's
clean start (before any action: "initially failing" means failing there), and ProCredit's
weight `c`. A verifier that reports one boolean has one check, "verdict", and every
formula reduces to it. The registry is open: a user module adds a formula with

    from verimut.findings.rewards import formula

    @formula("my-reward")
    def my_reward(checks, initial, c):
        return ...

and `verimut report DIR --rewards mymodule` imports it before computing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

from verimut.core.errors import AuditError
from verimut.core.registry import Registry

Checks = Mapping[str, bool]
Formula = Callable[[Checks, Checks, float], float]

FORMULAS: Registry[Formula] = Registry("reward formula")
DEFAULT_C = 0.5


def formula(name: str) -> Callable[[Formula], Formula]:
    return FORMULAS.register(name)


@formula("canopy")
def canopy(checks: Checks, initial: Checks, c: float) -> float:
    """CANOPY: 1 when every check passes, else 0."""
    return 1.0 if checks and all(checks.values()) else 0.0


@formula("entropy-preserving")
def entropy_preserving(checks: Checks, initial: Checks, c: float) -> float:
    """Entropy-Preserving RL: the fraction of checks that pass."""
    return sum(checks.values()) / len(checks) if checks else 0.0


def progress(checks: Checks, initial: Checks) -> float:
    """The fraction of the initially failing checks that now pass (0 when none failed initially)."""
    failing = [k for k in checks if not initial.get(k, False)]
    return sum(checks[k] for k in failing) / len(failing) if failing else 0.0


@formula("procredit")
def procredit(checks: Checks, initial: Checks, c: float) -> float:
    """ProCredit: the all-checks reward plus c times the progress on initially failing checks."""
    return canopy(checks, initial, c) + c * progress(checks, initial)


def load(modules: list[str]) -> None:
    """Import user modules that register formulas."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise AuditError(f"cannot import reward module {name!r}: {e}") from None


def of(checks: Checks, initial: Checks, c: float = DEFAULT_C) -> dict[str, float]:
    """The run's reward under every registered formula."""
    return {name: round(fn(checks, initial, c), 6) for name, fn in FORMULAS.items()}


def for_any_c(edit: Checks, control: Checks, initial: Checks) -> bool:
    """Whether ProCredit gives the edit at least the control's reward for every c > 0.

    Both terms are compared: the all-checks reward and the progress term. When the edit
    is at least as good on each, no positive weight can rank the control above it.
    """
    return canopy(edit, initial, 0) >= canopy(control, initial, 0) and progress(edit, initial) >= progress(
        control, initial
    )
