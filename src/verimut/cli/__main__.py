"""`python -m verimut.cli`, as the `verimut` command."""

from verimut.cli.app import main

main()
