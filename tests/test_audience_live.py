"""What the audience sees, live through the core: accuracy, classes, results, moments, display rules.

Real games (a lichess broadcast export with its [%eval]s) go through :class:`LiveCore` move by move;
the figures in its messages are checked against the models applied to the same evaluations, against
``analyse --json``'s report of the same estimator, and against the bad-input rules (no evaluation yet:
null, never 0 or 100; no rating tag: no TPR, with the reason; no result: nothing in the results).
"""

from __future__ import annotations

import json
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest

from livemon.faces.hub import PUBLIC_CHANNELS, ROUTES
from livemon.faces.web import codec
from livemon.live.audience import display_rules, game_figures
from livemon.live.core import LiveCore
from livemon.live.effects import Analyse, Effect, Publish
from livemon.live.messages import (
    BoardState,
    GameInfo,
    GameResult,
    GameRollback,
    Moment,
    MomentRemoved,
    MoveEvent,
    PlayerEstimate,
)
from livemon.live.values import PositionAnalysis
from livemon.rating.accuracy import game_accuracy
from livemon.rating.evaluation import score_cp

BROADCAST = Path(__file__).resolve().parent / "data" / "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
PROFILE = "[%eval] comments"


def broadcast_games(n: int | None = None) -> list[chess.pgn.Game]:
    games = []
    with BROADCAST.open(encoding="utf-8") as fh:
        while (game := chess.pgn.read_game(fh)) is not None:
            nodes = list(game.mainline())
            if nodes and all(node.eval() is not None for node in nodes[:-1]):
                games.append(game)
            if n is not None and len(games) == n:
                break
    return games


def info_of(game: chess.pgn.Game, gid: str) -> GameInfo:
    h = game.headers
    elo = lambda tag: int(h[tag]) if h.get(tag, "").isdigit() else None  # noqa: E731
    return GameInfo(gid, h["White"], h["Black"], elo("WhiteElo"), elo("BlackElo"), "BBDDNRR", h.get("Round", "?"))


def feed(core: LiveCore, game: chess.pgn.Game, gid: str, result: bool = True, info: GameInfo | None = None,
         evals: bool = True) -> list[Effect]:
    """A game as a feed sends it: tags, moves with their [%eval]s, the result; the start position (the
    one the engine must value) answered with a flat made-up analysis."""
    out = core.handle(info or info_of(game, gid))
    board = game.board()
    plies = 0
    for ply, node in enumerate(game.mainline(), start=1):
        cp = score_cp(node.eval().white()) if evals and node.eval() is not None else None
        out += core.handle(MoveEvent(gid, ply, node.move.uci(), board.san(node.move), board.fen(), eval_cp=cp))
        board.push(node.move)
        plies = ply
    for effect in list(out):
        if isinstance(effect, Analyse) and effect.index == 0:
            out += core.analysed(effect, PositionAnalysis(20, ()), PROFILE)
    if result:
        out += core.handle(GameResult(gid, game.headers["Result"], plies))
    return out


def published(effects: list[Effect], kind: type) -> list:
    return [e.message for e in effects if isinstance(e, Publish) and isinstance(e.message, kind)]


def cps_of(game: chess.pgn.Game) -> list[int]:
    return [score_cp(node.eval().white()) for node in game.mainline() if node.eval() is not None]


def test_board_messages_carry_lichess_game_accuracy_move_by_move() -> None:
    core = LiveCore(profile=PROFILE)
    game = broadcast_games(1)[0]
    boards = published(feed(core, game, "g1"), BoardState)
    cps = cps_of(game)
    last = boards[-1]
    expected = game_accuracy(cps)
    assert last.accuracy == {"white": round(expected.white, 1), "black": round(expected.black, 1)}
    # live: after ply 20 the figure is that of the first 20 evaluations
    at20 = [b for b in boards if b.ply == 20][-1]
    partial = game_accuracy(cps[:20])
    assert at20.accuracy == {"white": round(partial.white, 1), "black": round(partial.black, 1)}
    assert at20.accuracy != last.accuracy
    # the game's classes are lichess's judgements of the same evaluations
    assert last.classes == game_figures([None, *cps]).to_classes()
    assert sum(last.classes["white"].values()) >= 1  # White's 34. f3?? at least
    # on game:<id>: per position win%, per ply accuracy and class; not on the games channel
    wire = codec.to_dict(last)
    assert len(wire["win_percents"]) == len(last.evals) and len(wire["move_accuracy"]) == last.ply
    assert wire["move_classes"][66] == "blunder"  # ply 67: 34. f3??, lichess's own "Blunder."
    assert "win_percents" not in json.loads(codec.main_json(last))


def test_analyse_report_agrees_with_the_live_messages() -> None:
    core = LiveCore(profile=PROFILE)
    effects: list[Effect] = []
    games = broadcast_games(6)
    for i, game in enumerate(games):
        effects += feed(core, game, f"g{i}")
    report = {**core.estimator.report(), "players": [codec.report_entry(p) for p in core.player_estimates()]}
    last_board = {b.game_id: b for b in published(effects, BoardState)}
    for i, entry in enumerate(report["games"]):
        assert entry["accuracy"] == last_board[f"g{i}"].accuracy
        assert entry["accuracy"]["white"] is not None
    last_player = {p.name: p for p in published(effects, PlayerEstimate)}
    for entry in report["players"]:
        live = last_player[entry["name"]]
        assert (entry["accuracy"], entry["classes"], entry["results"]) == (live.accuracy, live.classes, live.results)
        mine = [g for g in range(len(games)) if entry["name"] in (report["games"][g]["white"], report["games"][g]["black"])]
        accs = [report["games"][g]["accuracy"]["white" if report["games"][g]["white"] == entry["name"] else "black"]
                for g in mine]
        assert entry["accuracy"] == pytest.approx(sum(accs) / len(accs), abs=0.06)  # mean of rounded figures
        assert entry["results"]["games"] == len(mine)
        assert entry["results"]["tpr"] is not None and entry["results"]["rating_change"] is not None


def test_no_evaluation_yet_shows_null_never_0_or_100() -> None:
    core = LiveCore(profile="SF depth=8 multipv=2")
    game = broadcast_games(1)[0]
    effects = feed(core, game, "g", result=False, evals=False)  # no [%eval]s and no engine answer
    board = published(effects, BoardState)[-1]
    assert board.accuracy == {"white": None, "black": None}
    assert board.classes == {"white": None, "black": None}
    wire = codec.to_dict(board)
    assert set(wire["move_accuracy"]) == {None} and set(wire["move_classes"]) == {None}
    player = core.player_estimate(core.estimator.players[game.headers["White"]])
    assert player.accuracy is None and player.classes is None
    assert player.results["games"] == 0 and player.results["tpr"] is None


def test_results_need_a_result_and_a_rating_tag() -> None:
    core = LiveCore(profile=PROFILE)
    first, second = broadcast_games(2)
    unrated = GameInfo("u", "Nobody, Unrated", first.headers["Black"], None, int(first.headers["BlackElo"]))
    effects = feed(core, first, "u", result=False, info=unrated)
    # no result yet: nothing counts
    black = core.player_estimate(core.estimator.players[first.headers["Black"]])
    assert black.results["games"] == 0 and black.results["score"] == 0.0
    effects = core.handle(GameResult("u", first.headers["Result"], 79))
    again = {p.name: p for p in published(effects, PlayerEstimate)}
    assert set(again) == {"Nobody, Unrated", first.headers["Black"]}  # both re-published with the result
    nobody = again["Nobody, Unrated"].results
    assert nobody["games"] == 1 and nobody["tpr"] is None and nobody["rating_change"] is None
    assert nobody["reason"] == "no rating tag for this player"
    opp = again[first.headers["Black"]].results
    assert opp["games"] == 1 and opp["rated_games"] == 0 and opp["tpr"] is None
    assert "rated opponent" in opp["reason"]
    feed(core, second, "r")
    rated = core.player_estimate(core.estimator.players[second.headers["White"]]).results
    assert rated["games"] == 1 and rated["tpr"] is not None and rated["k"] in (10.0, 20.0)


def test_moments_are_published_and_withdrawn_with_a_correction() -> None:
    core = LiveCore(profile=PROFILE)
    game = broadcast_games(1)[0]
    effects = feed(core, game, "g", result=False)
    moments = {m.ply: m for m in published(effects, Moment)}
    f3 = moments[67]  # 34. f3?? (lichess: "Blunder. Kc3 was best.")
    assert f3.move_san == "f3" and "blunder" in f3.kinds and f3.move_class == "blunder"
    assert f3.win_before > f3.win_after and f3.best_move_san is None  # [%eval]s name no best move
    assert all(m.win_before != m.win_after for m in moments.values())
    assert any("lead_change" in m.kinds for m in moments.values())
    out = core.handle(GameRollback("g", 60))
    removed = published(out, MomentRemoved)
    assert {r.ply for r in removed} == {p for p in moments if p >= 60} and 67 in {r.ply for r in removed}
    assert ROUTES["moment"].channel in PUBLIC_CHANNELS


def test_moment_names_the_engines_best_move(stockfish: str) -> None:
    """1.e4 e5 2.Qh5 Nc6 3.Bc4 Nf6?? 4.Qxf7#: a real Stockfish values every position; Nf6 lets mate in and
    is a blunder, the moment names Stockfish's best move there in SAN."""
    moves = ["e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7"]
    core = LiveCore(profile="Stockfish depth=8 multipv=2")
    out = core.handle(GameInfo("m", "A", "B", 2000, 2000))
    board = chess.Board()
    engine = chess.engine.SimpleEngine.popen_uci(stockfish)
    try:
        for ply, uci in enumerate(moves, start=1):
            move = chess.Move.from_uci(uci)
            out += core.handle(MoveEvent("m", ply, uci, board.san(move), board.fen()))
            board.push(move)
        best_at: dict[int, str] = {}
        for effect in list(out):
            if not isinstance(effect, Analyse):
                continue
            infos = engine.analyse(effect.board, chess.engine.Limit(depth=8), multipv=2)
            cands = tuple((i["pv"][0].uci(), score_cp(i["score"])) for i in infos)
            best_at[effect.index] = effect.board.san(chess.Move.from_uci(cands[0][0]))
            out += core.analysed(effect, PositionAnalysis(cands[0][1], cands), "Stockfish depth=8 multipv=2")
    finally:
        engine.quit()
    moments = {m.ply: m for m in published(out, Moment)}
    nf6 = moments[6]
    assert nf6.move_san == "Nf6" and "blunder" in nf6.kinds
    assert nf6.best_move_san == best_at[5] and nf6.best_move_san != "Nf6"
    assert nf6.win_before < 60.0 < 90.0 < nf6.win_after  # White's win%: mate in one for White after it


def test_display_rules_never_show_past_the_calibrated_range() -> None:
    cal = (1900.0, 2800.0)
    for elo, lo, hi in [(2700.0, 2550.0, 2900.0), (2000.0, 1850.0, 2150.0), (2500.0, 2300.0, 2700.0)]:
        shown = display_rules({"elo": elo, "cr95": [lo, hi]}, 4, 400.0, cal)
        assert shown["show"]
        assert cal[0] <= shown["cr95"][0] <= shown["cr95"][1] <= cal[1]
        assert ("open" in shown) == (lo < cal[0] or hi > cal[1])
    assert not display_rules({"elo": 2850.0, "cr95": [2700.0, 3000.0]}, 4, 400.0, cal)["show"]  # outside
    wide = display_rules({"elo": 2500.0, "cr95": [2100.0, 2900.0]}, 2, 400.0, cal)
    wider = display_rules({"elo": 2500.0, "cr95": [1900.0, 3100.0]}, 2, 400.0, cal)
    assert not wide["show"] and 0 < wide["more_games"] < wider["more_games"]
    # the interval narrows as 1/sqrt(games): 800 wide after 2 games needs 8 in all, 6 more
    assert wide["more_games"] == 6
    assert display_rules({"elo": None, "cr95": None, "reason": "uncalibrated: x"}, 3, 400.0, cal) == {
        "show": False, "more_games": None}  # the performance's own reason says why


def test_player_message_says_why_no_performance_is_shown() -> None:
    core = LiveCore(profile=PROFILE, max_interval_width=300.0)
    game = broadcast_games(1)[0]
    players = published(feed(core, game, "g"), PlayerEstimate)
    last = players[-1]
    assert last.display is not None and last.display["show"] is False
    assert last.performance["reason"].startswith("uncalibrated")  # no calibration of [%eval] comments
    assert last.estimate is not None and last.estimate["reason"].startswith("uncalibrated")  # the headline says why
    assert last.field_estimate is not None and last.field_estimate["display"]["show"] is False
    assert last.accuracy is not None  # shown instead


async def test_moments_reach_websocket_clients_and_their_mqtt_topic() -> None:
    """A real WebSocket client of the ``moments`` channel: the snapshot, a new moment, a removal; and the
    MQTT topic each goes to (retained: a late subscriber gets the round's moments)."""
    from livemon.config import MqttOutConfig, WebConfig
    from livemon.faces.hub import Hub
    from livemon.faces.mqtt import cleared_topics, topic_for
    from livemon.faces.web import serve_web
    from tests.test_web import client, recv_until, subscribe

    core = LiveCore(profile=PROFILE)
    moments = published(feed(core, broadcast_games(1)[0], "r1/b1", result=False), Moment)
    assert len(moments) >= 2
    hub = Hub()
    hub.publish(moments[0])
    async with serve_web(hub, WebConfig(port=0)) as srv:
        ws = await client(srv)
        (snap,) = await subscribe(ws, "moments")
        assert [(m["game_id"], m["ply"], m["kind"]) for m in snap["messages"]] == [("r1/b1", moments[0].ply, "moment")]
        hub.publish(moments[1])
        delta = await recv_until(ws, lambda f: f["type"] == "delta")
        assert delta["message"]["move_san"] == moments[1].move_san and delta["message"]["kinds"] == list(moments[1].kinds)
        hub.publish(MomentRemoved("r1/b1", moments[0].ply, "a correction"))
        gone = await recv_until(ws, lambda f: f["type"] == "delta")
        assert gone["message"]["kind"] == "moment_removed"
        assert [m.ply for m in hub.snapshot("moments")[1]] == [moments[1].ply]  # type: ignore[attr-defined]
        await ws.close()
    cfg = MqttOutConfig()
    assert topic_for(moments[1], cfg) == f"livemon/default/moments/r1%2Fb1/{moments[1].ply}"
    assert cleared_topics(MomentRemoved("r1/b1", 5), cfg) == ["livemon/default/moments/r1%2Fb1/5"]
