"""verimut: audit the task verifiers of agent benchmarks for false accepts."""

__version__ = "0.4.0"
