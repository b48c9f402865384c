"""Exact analysis of Elfern positions: the phase-2 solver and its compiled core (docs/analysis.md).

A layer just above the engine: it imports only `arena.engine`, so the SDK's simulation API and the
replay tools can both build on it.
"""

from arena.analysis.position import Position, PositionError
from arena.analysis.solver import Solution, analyse, best_value, solve

__all__ = ["Position", "PositionError", "Solution", "analyse", "best_value", "solve"]
