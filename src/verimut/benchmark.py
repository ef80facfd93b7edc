"""Deprecated: `verimut.benchmark` moved to `verimut.core.benchmark`; import its names from `verimut` (docs/adapters.md).

Kept for one release so that adapters written against 0.4 keep working; it warns once per process.
"""

import warnings

from verimut.core.benchmark import *

warnings.warn(
    "verimut.benchmark is deprecated: import its names from verimut (from verimut import ...); "
    "the module itself is verimut.core.benchmark",
    DeprecationWarning,
    stacklevel=2,
)
