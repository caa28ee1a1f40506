"""Is an engine result from a peer fit to cache? Checked against the position and the profile asked for.

A result from ``livemon worker`` over the bus is input from another machine:
before the monitor caches it (for good: the cache is never searched again) it
must look like what livemon's own engine adapter
(:meth:`livemon.io.engine.UciEngine.analyse`) produces for that position and
profile. A result that does not is refused with the reason, and the position
stays wanted. What a check cannot see (a well-formed but false evaluation) is
handled by naming: every cached result records its worker, and
``livemon worker --forget NAME`` drops a worker's results (docs/distributed.md).

>>> import chess
>>> from livemon.io.engine import EngineProfile, PositionAnalysis
>>> p = EngineProfile("Stockfish 15.1", 12, None, 4)
>>> check_analysis(PositionAnalysis(31, (("e2e4", 31), ("d2d4", 25)), 12, 9000), chess.Board(), p) is None
True
>>> check_analysis(PositionAnalysis(2**63, (("e2e4", 2**63),), 12, 9000), chess.Board(), p)
'score 9223372036854775808 outside [-3900, 3900]'
>>> check_analysis(PositionAnalysis(31, (("e2e4", 31), ("e2e4", 31)), 12, 9000), chess.Board(), p)
"candidate 'e2e4' twice"
>>> check_analysis(PositionAnalysis(31, (("e2e4", 31),), 7, 9000), chess.Board(), p)
'depth 7, the profile searches to depth 12'
>>> check_analysis(PositionAnalysis(31, (("e2e4", 31),), 12, 9000, mate=3), chess.Board(), p)
'mate 3 beside score 31 (a mate in 3 is 3900)'
"""

from __future__ import annotations

import chess

from livemon.io.engine import EngineProfile, PositionAnalysis
from livemon.live.fields import fits_int64
from livemon.rating.evaluation import MATE_CP, MAX_CP

__all__ = ["MAX_MATE", "NODES_SLACK", "check_analysis"]

MAX_MATE = 500
"""The farthest mate (moves) a search may report; a UCI engine searches far fewer plies."""

NODES_SLACK = 2
"""A nodes-limited search may overshoot its limit a little (Stockfish: a few nodes); more than
this factor is not the profile's search."""


def _cp(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -MAX_CP <= value <= MAX_CP


def check_analysis(analysis: PositionAnalysis, board: chess.Board, profile: EngineProfile) -> str | None:
    """None if ``analysis`` may be cached for ``board`` under ``profile``, else what is wrong with it.

    Checks: score and every candidate's score are integers in ±3900 (docs/models.md §0:
    livemon's engine adapter clamps, so a larger one is not its output); the
    score is the first candidate's; 1..multipv candidates, each a legal move
    in the position, none twice; the depth is the profile's (depth profiles)
    or positive (nodes profiles), the node count positive and, for a nodes
    profile, at most ``NODES_SLACK`` × the limit; every integer fits SQLite; a
    mate's distance, when given, is a nonzero whole number of moves up to
    ``MAX_MATE`` beside a mate's score of the same side.
    """
    if not _cp(analysis.score):
        return f"score {analysis.score!r} outside [-{MAX_CP}, {MAX_CP}]"
    candidates = analysis.candidates
    if not 1 <= len(candidates) <= profile.multipv:
        return f"{len(candidates)} candidates, the profile asks for 1 to {profile.multipv}"
    seen: set[str] = set()
    for uci, cp in candidates:
        if not _cp(cp):
            return f"candidate {uci!r} scored {cp!r}, outside [-{MAX_CP}, {MAX_CP}]"
        if uci in seen:
            return f"candidate {uci!r} twice"
        seen.add(uci)
        try:
            move = chess.Move.from_uci(uci)
        except (ValueError, TypeError):
            return f"candidate {uci!r} is not a UCI move"
        if not board.is_legal(move):
            return f"candidate {uci!r} is not legal in the position"
    if candidates[0][1] != analysis.score:
        return f"score {analysis.score} is not the best candidate's ({candidates[0][1]})"
    mate = analysis.mate
    if mate is not None:
        if not isinstance(mate, int) or isinstance(mate, bool) or not 0 < abs(mate) <= MAX_MATE:
            return f"mate {mate!r} is not a distance of 1 to {MAX_MATE} moves"
        if analysis.score != (MATE_CP if mate > 0 else -MATE_CP):
            return f"mate {mate} beside score {analysis.score} (a mate in {mate} is {MATE_CP if mate > 0 else -MATE_CP})"
    depth, nodes = analysis.depth, analysis.nodes
    for name, value in (("depth", depth), ("nodes", nodes)):
        if not isinstance(value, int) or isinstance(value, bool) or not fits_int64(value) or value < 0:
            return f"{name} {value!r} is not a count"
    if profile.nodes:
        if not 1 <= nodes <= NODES_SLACK * profile.nodes or depth < 1:
            return f"depth {depth}, nodes {nodes}: not a search of {profile.nodes} nodes"
    elif depth != profile.depth:
        return f"depth {depth}, the profile searches to depth {profile.depth}"
    return None
