"""The command line and the pytest plugin: the only stage that talks to a terminal's user."""

from verimut.cli.app import main

__all__ = ["main"]
