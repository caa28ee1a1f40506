"""``livemon forecast``: real events cut after some rounds, a game in progress, and bad input in one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from livemon.app.forecast import ForecastError, forecast_event, read_event
from livemon.config import EventConfig, load_config_text
from livemon.rating.forecast import DEFAULT, pregame

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).parent.parent
PRAGUE = DATA / "prague_masters_2022_fsmosca.pgn"
RR2025 = DATA / "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"
OPEN2025 = DATA / "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"


def _cut(src: Path, last_round: int, out: Path, edit: dict[int, str] | None = None) -> Path:
    """The games of ``src`` up to ``last_round``; ``edit`` replaces a game's text (by its index among those kept)."""
    text = src.read_text(encoding="utf-8")
    games = ["[Event" + c if i else c for i, c in enumerate(text.split("\n\n[Event"))]
    kept = [g for g in games if int(re.search(r'\[Round "(\d+)', g).group(1)) <= last_round]  # type: ignore[union-attr]
    for i, g in (edit or {}).items():
        kept[i] = g
    out.write_text("\n\n".join(g.strip() for g in kept) + "\n", encoding="utf-8")
    return out


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "livemon.cli", "forecast", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=300)


def test_finished_event_has_its_winner() -> None:
    out = _run(str(PRAGUE), "--json", "--seed", "1", "--simulations", "1000")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    top = data["players"][0]
    assert top["name"] == "Harikrishna, Pentala" and top["p_first"] == 1.0 and top["score"] == 6.5
    assert data["format"] == "rr" and data["format_source"] == "guessed" and data["rounds_left"] == 0
    assert data["simulations"] == 0 and any("no game is left" in n for n in data["notes"])  # exact, not simulated
    assert any("format guessed" in n for n in data["notes"])


def test_round_robin_cut_after_four_rounds(tmp_path: Path) -> None:
    data = forecast_event([str(_cut(PRAGUE, 4, tmp_path / "r4.pgn"))], EventConfig(), None, None, 20000, 2,
                          lambda line: None)
    ps = data["players"]
    assert data["rounds_left"] == 5 and len(ps) == 10
    assert sum(p["p_first"] for p in ps) == pytest.approx(1.0, abs=1e-5)
    assert sum(p["p_top3"] for p in ps) == pytest.approx(3.0, abs=1e-5)
    leader = max(p["score"] for p in ps)
    for p in ps:
        assert set(p) >= {"name", "p_first", "p_top3", "expected_score", "needs", "distribution"}
        assert p["max_score"] == p["score"] + 5
        if p["max_score"] < leader:
            assert p["p_first"] == 0.0


def test_game_in_progress_uses_its_evaluation(tmp_path: Path) -> None:
    # round 9 of the 2025 round robin: one game cut at move 15 with its [%eval] comments, result "*"
    text = RR2025.read_text(encoding="utf-8")
    games = ["[Event" + c if i else c for i, c in enumerate(text.split("\n\n[Event"))]
    r9 = next(g for g in games if '[Round "9.1"]' in g)
    head, _, moves = r9.partition("\n\n")
    cut = moves[: moves.index(" 16. ")] + " *"
    live = re.sub(r'\[Result "[^"]*"\]', '[Result "*"]', head) + "\n\n" + cut
    path = _cut(RR2025, 8, tmp_path / "r8.pgn")
    path.write_text(path.read_text(encoding="utf-8") + "\n" + live + "\n", encoding="utf-8")
    read = read_event([str(path)], EventConfig(), None, None, lambda line: None, DEFAULT)
    assert len(read.state.ongoing) == 1
    (w, b, probs) = read.state.ongoing[0]
    assert abs(sum(probs) - 1) < 1e-9
    before = pregame(read.state.ratings[w], read.state.ratings[b])
    assert abs(probs[0] - before[0]) > 1e-5  # the evaluation and the clocks moved it
    # without its comments the same game is valued by the ratings alone
    path.write_text(re.sub(r"\{[^}]*\}", "", path.read_text(encoding="utf-8")), encoding="utf-8")
    read = read_event([str(path)], EventConfig(), None, None, lambda line: None, DEFAULT)
    assert read.state.ongoing[0][2] == pytest.approx(before, abs=1e-12)
    assert read.state.rounds == 9 and read.state.format == "rr"


def test_swiss_needs_its_rounds_and_says_so(tmp_path: Path) -> None:
    cut = _cut(OPEN2025, 6, tmp_path / "open_r6.pgn")
    out = _run(str(cut), "--format", "swiss")
    assert out.returncode == 1
    assert out.stderr.strip().count("\n") == 0 and "number of rounds" in out.stderr and "Traceback" not in out.stderr
    out = _run(str(cut), "--format", "swiss", "--rounds", "9", "--json", "--simulations", "3000", "--seed", "4")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["rounds_left"] == 3 and data["event"] == "open_r6"
    assert sum(p["p_first"] for p in data["players"]) == pytest.approx(1.0, abs=1e-5)
    leader = max(p["score"] for p in data["players"])
    assert all(p["p_first"] == 0 for p in data["players"] if p["score"] + 3 < leader)


def test_config_event_table(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[event]\nformat = "rr"\nrounds = 9\ntiebreaks = ["direct", "sb"]\nsimulations = 2000\n',
                   encoding="utf-8")
    out = _run(str(_cut(PRAGUE, 5, tmp_path / "r5.pgn")), "--config", str(cfg), "--json", "--seed", "3")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["format_source"] == "config" and data["rounds_source"] == "config"
    assert data["tiebreaks"] == ["direct", "sb"] and data["simulations"] == 2000
    assert sum(p["p_winner"] for p in data["players"]) == pytest.approx(1.0, abs=1e-5)
    assert load_config_text('[event]\nformat = "rr"').event.format == "rr"


def test_football_scoring_from_the_config_and_the_command_line(tmp_path: Path) -> None:
    """Prague 2022 after five rounds at 3-1-0: every score is 3 a win and 1 a draw of the file's games, the table says
    how it scores, and a bad value is one line."""
    import chess.pgn

    cut = _cut(PRAGUE, 5, tmp_path / "r5.pgn")
    points: dict[str, int] = {}
    with cut.open(encoding="utf-8") as pgn:
        while (h := chess.pgn.read_headers(pgn)) is not None:
            w, b = {"1-0": (3, 0), "0-1": (0, 3), "1/2-1/2": (1, 1)}[h["Result"]]
            points[h["White"]] = points.get(h["White"], 0) + w
            points[h["Black"]] = points.get(h["Black"], 0) + b
    cfg = tmp_path / "config.toml"
    cfg.write_text('[event]\npoints = "3-1-0"\nsimulations = 2000\n', encoding="utf-8")
    for how in (["--config", str(cfg)], ["--points", "3-1-0", "--simulations", "2000"]):
        out = _run(str(cut), *how, "--json", "--seed", "3")
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["points"] == "3-1-0" and {p["name"]: p["score"] for p in data["players"]} == points
        assert sum(p["p_first"] for p in data["players"]) == pytest.approx(1.0, abs=1e-5)
        for p in data["players"]:
            assert p["max_score"] == p["score"] + 3 * 4 and all(float(k) == int(float(k)) for k in p["distribution"])
    text = _run(str(cut), "--points", "3-1-0", "--simulations", "2000").stdout
    assert "3-1-0 scoring (win-draw-loss)" in text.splitlines()[0]
    out = _run(str(cut), "--points", "1-1-0")
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "a win must give more than a draw" in out.stderr
    with pytest.raises(Exception, match="event.points"):
        load_config_text('[event]\npoints = "three"')


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    out = _run(str(tmp_path / "missing.pgn"))
    assert out.returncode == 1 and "cannot read" in out.stderr and "Traceback" not in out.stderr
    empty = tmp_path / "empty.pgn"
    empty.write_text("", encoding="utf-8")
    out = _run(str(empty))
    assert out.returncode == 1 and "nothing to forecast" in out.stderr
    with pytest.raises(ForecastError):
        read_event([str(empty)], EventConfig(), None, None, lambda line: None, DEFAULT)


def test_round_robin_colours_from_the_berger_tables(tmp_path: Path) -> None:
    read = read_event([str(_cut(PRAGUE, 3, tmp_path / "r3.pgn"))], EventConfig(), "rr", None, lambda line: None,
                      DEFAULT)
    assert read.state.numbers is not None and sorted(read.state.numbers) == list(range(1, 11))
    assert any("Berger tables" in n for n in read.notes)
    # boards shuffled: the games no longer follow the tables, and that is said
    text = (tmp_path / "r3.pgn").read_text(encoding="utf-8").replace('[Round "1.1"]', '[Round "1.9"]')
    (tmp_path / "odd.pgn").write_text(text, encoding="utf-8")
    read = read_event([str(tmp_path / "odd.pgn")], EventConfig(), "rr", None, lambda line: None, DEFAULT)
    assert read.state.numbers is None and any("each taken as even" in n for n in read.notes)


def test_knockout_from_its_games(tmp_path: Path) -> None:
    def game(rnd: str, w: str, b: str, res: str) -> str:
        elo = {"A": 2700, "B": 2600, "C": 2650, "D": 2550}
        return (f'[Event "KO"]\n[Round "{rnd}"]\n[White "{w}"]\n[Black "{b}"]\n[WhiteElo "{elo[w]}"]\n'
                f'[BlackElo "{elo[b]}"]\n[Result "{res}"]\n\n1. e4 e5 {res}\n')
    pgn = tmp_path / "ko.pgn"
    pgn.write_text("\n".join([game("1.1", "A", "B", "1-0"), game("1.1", "C", "D", "0-1"), game("1.2", "B", "A", "1/2-1/2"),
                              game("1.2", "D", "C", "1/2-1/2"), game("2.1", "A", "D", "1/2-1/2")]), encoding="utf-8")
    out = _run(str(pgn), "--format", "ko", "--rounds", "2", "--json", "--seed", "1", "--simulations", "4000")
    assert out.returncode == 0, out.stderr
    p = {x["name"]: x["p_first"] for x in json.loads(out.stdout)["players"]}
    assert p["B"] == 0 and p["C"] == 0 and p["A"] + p["D"] == pytest.approx(1.0, abs=1e-5) and p["A"] > p["D"]


def test_a_withdrawn_player_plays_no_more(tmp_path: Path) -> None:
    cut = str(_cut(PRAGUE, 4, tmp_path / "r4.pgn"))
    out = _run(cut, "--withdrawn", "Harikrishna, Pentala", "--withdrawn", "Nobody", "--json", "--seed", "2",
               "--simulations", "3000")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    hari = next(p for p in data["players"] if p["name"] == "Harikrishna, Pentala")
    assert hari["max_score"] == hari["score"] == hari["expected_score"]  # no games to come
    assert any("no player named 'Nobody'" in n for n in data["notes"])
    assert any(n.startswith("withdrawn: Harikrishna") for n in data["notes"])
    others = [p for p in data["players"] if p["name"] != "Harikrishna, Pentala"]
    left = sorted(p["max_score"] - p["score"] for p in others)  # five rounds left: the withdrawn opponent's game gone
    assert left == [4] * 5 + [5] * 4  # ... for the five who had not met him yet


def test_a_withdrawn_player_named_by_fide_id(tmp_path: Path) -> None:
    """``[event] withdrawn`` takes a FIDE id as well as a name (the games key players by their FideId tags)."""
    cut = str(_cut(PRAGUE, 4, tmp_path / "r4.pgn"))
    data = forecast_event([cut], EventConfig(withdrawn=["5007003"]), None, None, 2000, 2, lambda line: None)
    hari = next(p for p in data["players"] if p["name"] == "Harikrishna, Pentala")
    assert hari["max_score"] == hari["score"] == hari["expected_score"]
    assert any(n.startswith("withdrawn: Harikrishna") for n in data["notes"])


LONDON = DATA / "london_chess_classic_2011_twic.pgn"


def _field(path: Path, spell: dict[str, str] | None = None) -> str:
    """``[[event.players]]`` of every player of ``path``'s games (names respelled by ``spell``), with ratings and ids."""
    import chess.pgn

    seen: dict[str, tuple[str, str]] = {}
    with path.open(encoding="utf-8") as f:
        while (h := chess.pgn.read_headers(f)) is not None:
            for c in ("White", "Black"):
                seen.setdefault(h[c], (h[c + "Elo"], h[c + "FideId"]))
    return "".join(f'[[event.players]]\nname = "{(spell or {}).get(n, n)}"\nrating = {r}\nfide_id = "{i}"\n'
                   for n, (r, i) in seen.items())


def test_a_round_robins_listed_field_counts_the_player_who_rests_in_round_one(tmp_path: Path) -> None:
    """London 2011: nine players, one resting each round. After round 1 the games show eight, so the guess is an
    eight-player round robin of 7 rounds; with the field listed ([[event.players]]), nine, 9 rounds, 8 left, and
    the resting player (Short) on 0 with all eight games to play. A listed name spelled otherwise than the games
    is matched by its FIDE id: no player twice."""
    r1 = str(_cut(LONDON, 1, tmp_path / "r1.pgn"))
    guessed = forecast_event([r1], EventConfig(), None, None, 2000, 1, lambda line: None)
    assert len(guessed["players"]) == 8 and guessed["rounds"] == 7
    told = forecast_event([r1], EventConfig(format="rr", rounds=9), None, None, 2000, 1, lambda line: None)
    assert len(told["players"]) == 8 and any(  # the rounds set and the players seen disagree: said
        n.startswith("9 rounds set for a round robin of the 8 players seen, which plays 7") and "[[event.players]]" in n
        for n in told["notes"]), told["notes"]
    for spell in (None, {"Carlsen,M": "Carlsen, Magnus"}):
        cfg = load_config_text('[event]\nformat = "rr"\n' + _field(LONDON, spell))
        data = forecast_event([r1], cfg.event, None, None, 2000, 1, lambda line: None)
        ps = {p["name"]: p for p in data["players"]}
        assert len(ps) == 9 and data["rounds"] == 9 and data["rounds_left"] == 8, (sorted(ps), data["rounds"])
        assert ps["Short,N"]["score"] == 0 and ps["Short,N"]["max_score"] == 8 and ps["Short,N"]["p_first"] > 0.01
        assert "Carlsen,M" in ps and ps["Carlsen,M"]["score"] == 1  # by the games' name, once


@pytest.mark.parametrize("table, fault", [
    ('[[event.players]]\nrating = 2700\n', "needs a name"),
    ('[[event.players]]\nname = "A"\nrating = 700\n', "A's rating"),
    ('[[event.players]]\nname = "A"\nfide_id = "12a"\n', "A's fide_id"),
    ('[[event.players]]\nname = "A"\nelo = 2700\n', "unknown key"),
])
def test_a_bad_listed_player_is_one_line(table: str, fault: str) -> None:
    from livemon.config import ConfigError

    with pytest.raises(ConfigError, match=fault):
        load_config_text("[event]\n" + table)


LONDON_FIELD = ("Adams, Michael", "Anand, Viswanathan", "Aronian, Levon", "Carlsen, Magnus", "Howell, David",
                "Kramnik, Vladimir", "McShane, Luke", "Nakamura, Hikaru", "Short, Nigel")


def test_a_listed_field_spelled_otherwise_than_the_games_is_matched_without_fide_ids(tmp_path: Path) -> None:
    """London 2011's games spell the players TWIC's way ("Adams,Mi", "Short,N"); the organisers' list spells them
    in full and gives no FIDE id: each listed player is the games' one (nine players, none twice, the resting
    Short on 0 with seven games to play, the withdrawn Nakamura's not played), and the notes say how each was
    read. A withdrawal spelled in full is matched the same way. Short, resting in round 1, is the listed one until
    his first game names him."""
    table = "".join(f'[[event.players]]\nname = "{n}"\n' for n in LONDON_FIELD)
    cfg = load_config_text('[event]\nformat = "rr"\nwithdrawn = ["Nakamura, Hikaru"]\n' + table)
    r1 = str(_cut(LONDON, 1, tmp_path / "r1.pgn"))
    data = forecast_event([r1], cfg.event, None, None, 2000, 1, lambda line: None)
    ps = {p["name"]: p for p in data["players"]}
    assert len(ps) == 9 and data["rounds"] == 9, sorted(ps)
    assert ps["Short, Nigel"]["score"] == 0 and ps["Short, Nigel"]["max_score"] == 7  # 8 games, less withdrawn Nakamura
    assert "listed 'Adams, Michael' is 'Adams,Mi' of the games" in data["notes"]
    r2 = str(_cut(LONDON, 2, tmp_path / "r2.pgn"))
    data = forecast_event([r2], cfg.event, None, None, 2000, 1, lambda line: None)
    ps = {p["name"]: p for p in data["players"]}
    assert len(ps) == 9 and "Short,N" in ps, sorted(ps)
    assert "listed 'Short, Nigel' is 'Short,N' of the games" in data["notes"]
    assert ps["Nakamura,Hi"]["max_score"] == ps["Nakamura,Hi"]["score"]  # withdrawn: no games to come
    assert any(n.startswith("withdrawn: Nakamura,Hi") for n in data["notes"])


def test_a_listed_name_that_fits_two_players_is_counted_apart_and_said(tmp_path: Path) -> None:
    """A spelling that can name two players of the games names neither: a second Carlsen in the games, and the
    list says only "Carlsen"."""
    r1 = _cut(LONDON, 1, tmp_path / "r1.pgn")
    r1.write_text(r1.read_text(encoding="utf-8").replace("Anand,V", "Carlsen,V"), encoding="utf-8")
    cfg = load_config_text('[event]\nformat = "rr"\n[[event.players]]\nname = "Carlsen"\n')
    data = forecast_event([str(r1)], cfg.event, None, None, 2000, 1, lambda line: None)
    names = {p["name"] for p in data["players"]}
    assert {"Carlsen,M", "Carlsen,V", "Carlsen"} <= names  # counted apart, as listed
    assert any(n.startswith("listed 'Carlsen' can be any of 'Carlsen,") for n in data["notes"]), data["notes"]


def test_a_rematch_in_an_open_is_not_a_double_round_robin(tmp_path: Path) -> None:
    """A pair that met twice makes a double round robin of a small field only: in an open's field (a rematch, a
    board's players kept together) the guess is a Swiss, whose unknown rounds are refused in one line, not a double
    round robin of every pair (millions of games to simulate)."""
    text = _cut(OPEN2025, 6, tmp_path / "open_r6.pgn").read_text(encoding="utf-8")
    first = "[Event" + text.split("\n\n[Event")[1]  # a finished game of the open, played again in round 7
    again = re.sub(r'\[Round "[^"]*"\]', '[Round "7.1"]', first)
    (tmp_path / "rematch.pgn").write_text(text + "\n\n" + again.strip() + "\n", encoding="utf-8")
    with pytest.raises(ForecastError, match="rounds of this swiss is not known"):
        forecast_event([str(tmp_path / "rematch.pgn")], EventConfig(), None, None, 1000, 1, lambda line: None)
    small = _cut(PRAGUE, 4, tmp_path / "r4.pgn").read_text(encoding="utf-8")
    replay = re.sub(r'\[Round "[^"]*"\]', '[Round "5.1"]', "[Event" + small.split("\n\n[Event")[1])
    (tmp_path / "twice.pgn").write_text(small + "\n\n" + replay.strip() + "\n", encoding="utf-8")
    data = forecast_event([str(tmp_path / "twice.pgn")], EventConfig(), None, None, 1000, 1, lambda line: None)
    assert data["format"] == "drr" and data["format_source"] == "guessed"  # ten players: a double round robin
