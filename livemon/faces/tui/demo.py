"""A hub filled from real games, so the screen can be seen and tested without a monitor.

The games are a real over-the-board event (a lichess broadcast export with
``[%eval]`` and ``[%clk]`` on every move, see shared/data/real/MANIFEST.md):
rounds 1–3 finished, round 4 cut part-way so its boards are "live". Gains
come from the ``[%eval]`` comments through the project's own
:class:`~livemon.live.estimator.Estimator`, so the players table shows the figures
``livemon analyse`` would. Everything is deterministic: no wall clock, no
engine. One extra board (Nepomniachtchi–Ding, no comments) shows a game whose
positions still await analysis.

The 95% range of the perceived Elo is a normal approximation on the expected
score against the engine, made here only for the demo; the monitor publishes
its own.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path


from livemon.live.estimator import Estimator, ScoredPly
from livemon.faces.hub import Hub
from livemon.live.messages import BoardState, GameInfo, Outgoing, MonitorStatus, PlayerEstimate
from livemon.live.pgn import GoodGame, game_info, read_games
from livemon.rating.evaluation import score_cp
from livemon.rating.gain import finite_or_none, rating_difference

REAL = Path(os.environ.get("LIVEMON_REAL_DATA", Path(__file__).resolve().parents[4] / "shared" / "data" / "real"))
EVENT_PGN = "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
PENDING_PGN = "wcc2023_nepo_ding_g1_pythonchess.pgn"


@dataclass
class Demo:
    """The messages already published and those a replay would publish next (in order)."""

    hub: Hub
    pending: list[Outgoing]


def _games(name: str) -> list[GoodGame]:
    path = REAL / name
    text = path.read_text(encoding="utf-8")
    return [g for g in read_games(text, name) if isinstance(g, GoodGame)]


def _range(est: Estimator, name: str, strength: float | None) -> tuple[float | None, float | None] | None:
    """Demo-only 95% interval: p ± 1.96·√(p(1−p)/n) mapped to Elo (an open end is None)."""
    live = est.players[name].live
    p = live.expected_score
    if strength is None or p is None or not live.n:
        return None
    half = 1.96 * math.sqrt(max(p * (1 - p), 0.25 / live.n) / live.n)

    def elo(q: float) -> float | None:
        return None if not 0 < q < 1 else finite_or_none(strength + rating_difference(q))

    return (elo(p - half), elo(p + half))


def player_estimate(est: Estimator, name: str) -> PlayerEstimate:
    """The estimator's report of one player as the message the monitor publishes."""
    strength = est.engine_strength()
    r = est.player_report(est.players[name], strength)
    hist = est.players[name].histogram
    return PlayerEstimate(
        name=name,
        elo=r["elo"],
        moves=r["moves"],
        mean_gain=r["mean_gain"],
        expected_score_vs_engine=r["expected_score_vs_engine"],
        rating_diff_vs_engine=r["rating_diff_vs_engine"],
        perceived_elo=r["perceived_elo"],
        performance=r["performance"],
        perceived_elo_range=_range(est, name, strength),
        gain_histogram={str(g): n for g, n in hist.to_dict().items()},
    )


class _Board:
    """One game being replayed ply by ply into BoardState messages."""

    def __init__(self, parsed: GoodGame, game_id: str) -> None:
        self.game = parsed.game
        self.info: GameInfo = game_info(parsed.game.headers, game_id)
        self.nodes = list(parsed.game.mainline())
        self.board = parsed.game.board()
        start = parsed.game.eval()
        self.evals: list[int | None] = [None if start is None else score_cp(start.white())]
        self.clocks: list[float | None] = [None, None]
        self.ply = 0

    def state(self, result: str = "*") -> BoardState:
        last = self.nodes[self.ply - 1] if self.ply else None
        return BoardState(
            game_id=self.info.game_id,
            white=self.info.white,
            black=self.info.black,
            white_elo=self.info.white_elo,
            black_elo=self.info.black_elo,
            fen=self.board.fen(),
            ply=self.ply,
            last_move_san=last.san() if last else None,
            last_move_uci=last.move.uci() if last else None,
            eval_cp=self.evals[-1],
            evals=tuple(self.evals),
            white_clock=self.clocks[0],
            black_clock=self.clocks[1],
            result=result,
            event=self.info.event,
            round=self.info.round,
        )

    def step(self, est: Estimator | None) -> list[Outgoing]:
        """Play the next ply: the board, then the mover's estimate when it was scored."""
        node = self.nodes[self.ply]
        self.board.push(node.move)
        self.ply += 1
        ev = node.eval()
        self.evals.append(None if ev is None else score_cp(ev.white()))
        if node.clock() is not None:
            self.clocks[(self.ply - 1) % 2] = node.clock()
        done = self.ply == len(self.nodes)
        out: list[Outgoing] = [self.state(self.game.headers.get("Result", "*") if done else "*")]
        before, after = self.evals[-2], self.evals[-1]
        if est is not None and after is not None:
            mover = est.add_ply(ScoredPly(self.info.game_id, self.ply, before, after))
            out.append(player_estimate(est, mover.name))
        return out


def _interleave(boards: list[_Board], stops: list[int], est: Estimator | None) -> list[Outgoing]:
    """Ply 1 of every board, then ply 2, ... each board up to its stop (as a round is broadcast)."""
    out: list[Outgoing] = []
    for _ in range(max(stops, default=0)):
        for b, stop in zip(boards, stops):
            if b.ply < stop:
                out.extend(b.step(est))
    return out


def demo(live_fraction: float = 0.6) -> Demo:
    """Rounds 1–3 finished, round 4 at ``live_fraction`` of each game, plus one unanalysed board."""
    est = Estimator()
    est.profile = "[%eval] comments"  # no MultiPV, no calibration: the performance column says so
    games = _games(EVENT_PGN)
    published: list[Outgoing] = []
    pending_boards: list[_Board] = []
    for rnd in ("1", "2", "3", "4"):
        boards = []
        for parsed in games:
            if parsed.game.headers.get("Round", "").split(".")[0] == rnd:
                b = _Board(parsed, f"{EVENT_PGN}#{parsed.index}")
                est.add_game(b.info)
                boards.append(b)
        live = rnd == "4"
        stops = [int(len(b.nodes) * live_fraction) if live else len(b.nodes) for b in boards]
        published += _interleave(boards, stops, est)
        if live:
            pending_boards += boards
    # The monitor refreshes every estimate when the engine strength moves; publish the refresh.
    published += [player_estimate(est, name) for name in sorted(est.players) if est.players[name].histogram.n]
    wcc = _Board(_games(PENDING_PGN)[0], f"{PENDING_PGN}#1")
    published += _interleave([wcc], [30], None)
    plies = sum(isinstance(m, BoardState) for m in published)
    published.append(
        MonitorStatus(
            feeds=(
                {"name": "broadcast", "type": "replay", "state": "running", "games": 20, "plies": plies - 30, "errors": 0},
                {"name": "wcc2023", "type": "file", "state": "running", "games": 1, "plies": 30, "errors": 0},
            ),
            backlog=30,
            engine_profile="[%eval] comments",
            engines=1,
            lag_seconds=1.5,
            moves=plies,
            games=21,
        )
    )
    hub = Hub()
    for msg in published:
        hub.publish(msg)
    pending = _interleave(pending_boards, [len(b.nodes) for b in pending_boards], est)
    return Demo(hub, pending)


def demo_hub() -> Hub:
    """A hub holding the demo's snapshot (see :func:`demo`)."""
    return demo().hub
