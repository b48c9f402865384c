"""Training environments on the engine (docs/training.md): one encoding of a seat's view
(`arena.env.encoding`), the OpenSpiel game `python_elfern` (`arena.env.openspiel_game`), the PettingZoo
AEC environment `elfern_v0` (`arena.env.pettingzoo_env`) and the Gymnasium `Elfern-v0`
(`arena.env.gym_env`). Each module imports its library itself (the `rl` extra); this package imports
nothing heavy."""
