"""Elfern Arena: a referee, sandbox and ladder for bots playing the card game Elfern."""

__version__ = "0.1.0"
