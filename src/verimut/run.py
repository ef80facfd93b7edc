"""Deprecated: `verimut.run` moved to `verimut.core.run`; import its names from `verimut` (docs/adapters.md).

Kept for one release so that adapters written against 0.4 keep working; it warns once per process.
"""

import warnings

from verimut.core.run import *

warnings.warn(
    "verimut.run is deprecated: import its names from verimut (from verimut import ...); "
    "the module itself is verimut.core.run",
    DeprecationWarning,
    stacklevel=2,
)
