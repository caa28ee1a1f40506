"""Pure rating models: no asyncio, no engine, no files.

* :mod:`livemon.rating.evaluation` — centipawn conventions and mate mapping (docs/models.md §0);
* :mod:`livemon.rating.gain` — gain per move, histograms, Ferreira's Algorithms 1–4 (§1);
* :mod:`livemon.rating.agent` — the stochastic reference agent E(c) and the posterior of c (§2);
* :mod:`livemon.rating.ttt` — TrueSkill Through Time, TTT and TTT-D (§4).
"""
