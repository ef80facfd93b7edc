"""Deprecated: `verimut.errors` moved to `verimut.core.errors`; import its names from `verimut` (docs/adapters.md).

Kept for one release so that adapters written against 0.4 keep working; it warns once per process.
"""

import warnings

from verimut.core.errors import *

warnings.warn(
    "verimut.errors is deprecated: import its names from verimut (from verimut import ...); "
    "the module itself is verimut.core.errors",
    DeprecationWarning,
    stacklevel=2,
)
