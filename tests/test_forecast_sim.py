"""The standings simulation (livemon.rating.standings): sound by construction, right where it can be checked."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from livemon.rating.forecast import pregame
from livemon.rating.standings import EventState, Points, Result, berger, simulate


def _sound(state: EventState, n: int = 4000, seed: int = 0) -> None:
    f = simulate(state, n, seed=seed, exact=False)
    exact = simulate(state, n, seed=seed)  # a decided event answered without simulating: the same chances of first
    if exact.simulations == 0:
        # the same up to rounding: a first shared three ways is 1/3 exactly, and a sum of thirds over simulations
        assert [x.p_first for x in exact.players] == pytest.approx([x.p_first for x in f.players], abs=1e-12)
        assert [x.p_winner for x in exact.players] == pytest.approx([x.p_winner for x in f.players], abs=1e-12)
    p = len(state.players)
    now = [x.score for x in f.players]
    assert sum(x.p_first for x in f.players) == pytest.approx(1.0, abs=1e-9)
    assert sum(x.p_winner for x in f.players) == pytest.approx(1.0, abs=1e-9)
    assert sum(x.p_top3 for x in f.players) == pytest.approx(min(3, p), abs=1e-9)
    best_max = max(x.max_score for x in f.players)
    for x in f.players:
        assert min(x.distribution) >= x.score  # points scored are never lost
        assert x.score - 1e-9 <= x.expected_score <= x.max_score + 1e-9
        assert sum(x.distribution.values()) == pytest.approx(1.0)
        assert 0 <= x.p_first <= x.p_top3 + 1e-12 <= 1 + 1e-12
    leader = max(now)
    for x, upper in zip(f.players, _upper(state)):
        if upper < leader:
            assert x.p_first == 0.0  # cannot reach the leader any more
        if all(x.score > u for y, u in zip(f.players, _upper(state)) if y is not x):
            assert x.p_first == 1.0  # clinched
    assert best_max <= max(_upper(state)) + 1e-9


def _upper(state: EventState) -> list[float]:
    """Each player's best possible final score in a round robin (every remaining game won)."""
    legs = 2 if state.format == "drr" else 1
    p = len(state.players)
    score = [0.0] * p
    played = [[0] * p for _ in range(p)]
    got = {1.0: state.points.win, 0.5: state.points.draw, 0.0: state.points.loss}
    for r in state.results:
        score[r.white] += got[r.score]
        score[r.black] += got[1 - r.score]
        played[r.white][r.black] += 1
        played[r.black][r.white] += 1
    out = []
    for i in range(p):
        left = 0 if i in state.withdrawn else sum(legs - played[i][j] for j in range(p)
                                                  if j != i and j not in state.withdrawn)
        out.append(score[i] + left * state.points.win)
    return out


@st.composite
def round_robins(draw: st.DrawFn) -> EventState:
    p = draw(st.integers(2, 8))
    fmt = draw(st.sampled_from(["rr", "drr"]))
    legs = 2 if fmt == "drr" else 1
    ratings = draw(st.lists(st.integers(1400, 2850), min_size=p, max_size=p))
    results = []
    for i, j in itertools.combinations(range(p), 2):
        for leg in range(legs):
            if draw(st.booleans()):
                w, b = (i, j) if leg == 0 else (j, i)
                results.append(Result(w, b, draw(st.sampled_from([0.0, 0.5, 1.0]))))
    withdrawn = frozenset(draw(st.sets(st.integers(0, p - 1), max_size=1)))
    tbs = draw(st.sampled_from([(), ("direct",), ("sb", "direct"), ("buchholz",)]))
    return EventState([f"P{i}" for i in range(p)], ratings, fmt, rounds=None, results=results, withdrawn=withdrawn,
                      tiebreaks=tbs)


@settings(max_examples=40, deadline=None)
@given(round_robins(), st.integers(0, 2**16))
def test_round_robins_are_sound(state: EventState, seed: int) -> None:
    _sound(state, 2000, seed)


@settings(max_examples=25, deadline=None)
@given(round_robins(), st.integers(0, 2**16), st.sampled_from(["3-1-0", "2-1-0", "3-1.5-1"]))
def test_round_robins_are_sound_in_other_points(state: EventState, seed: int, points: str) -> None:
    state.points = Points.parse(points)
    _sound(state, 2000, seed)


def test_football_scoring_separates_what_game_points_tie() -> None:
    # finished: A won twice and lost once (2 game points, 6 at 3-1-0), B won once and drew twice (2, 5)
    res = [Result(0, 2, 1.0), Result(0, 3, 1.0), Result(1, 0, 1.0), Result(1, 2, 0.5), Result(3, 1, 0.5),
           Result(3, 2, 1.0)]
    state = EventState(list("ABCD"), [2500] * 4, "rr", rounds=3, results=res)
    fide = simulate(state, 100, seed=0)
    assert [x.score for x in fide.players] == [2.0, 2.0, 0.5, 1.5] and [x.p_first for x in fide.players][:2] == [0.5, 0.5]
    state.points = Points.parse("3-1-0")
    football = simulate(state, 100, seed=0)
    assert [x.score for x in football.players] == [6.0, 5.0, 1.0, 4.0]
    assert [x.p_first for x in football.players] == [1.0, 0.0, 0.0, 0.0] and football.simulations == 0
    # earlier (B v D and C v D to come, colours unknown): every score in whole points of 0, 1 or 3 a game
    state = EventState(list("ABCD"), [2600, 2550, 2500, 2450], "rr", rounds=3, results=res[:4], points=Points(3, 1, 0))
    sim = simulate(state, 200_000, seed=1)
    assert sim.simulations == 200_000 and [x.score for x in sim.players] == [6.0, 4.0, 1.0, 0.0]
    for x, left in zip(sim.players, (0, 1, 1, 2)):
        assert set(x.distribution) <= {x.score + k for k in (0, 1, 2, 3, 4, 6)[:1 + 3 * left]}
        assert x.max_score == x.score + 3 * left
    w, d, _ = pregame(2550, 2450)  # B White
    _, d2, l2 = pregame(2450, 2550)  # B Black
    assert sim.players[1].expected_score == pytest.approx(4 + ((3 * w + d) + (3 * l2 + d2)) / 2, abs=0.01)


def test_a_swiss_in_football_scoring() -> None:
    state = _swiss_state(30, 4, seed=3)
    fide = simulate(state, 3000, seed=1)
    state.points = Points.parse("3-1-0")
    f = simulate(state, 3000, seed=1)
    assert sum(x.p_first for x in f.players) == pytest.approx(1.0)
    assert {x.name: x.score for x in f.players} == {
        x.name: 3 * sum(r.score == 1.0 for r in state.results if x.name == f"P{r.white}") +
        3 * sum(r.score == 0.0 for r in state.results if x.name == f"P{r.black}") +
        sum(r.score == 0.5 for r in state.results if x.name in (f"P{r.white}", f"P{r.black}")) +
        3 * sum(1 for b, _ in state.byes if x.name == f"P{b}") for x in fide.players}
    leader = max(x.score for x in f.players)
    for x in f.players:
        assert min(x.distribution) >= x.score and x.max_score <= x.score + 3 * 3
        assert all(s == int(s) for s in x.distribution)  # whole points only
        if x.score + 9 < leader:
            assert x.p_first == 0.0


def test_kept_simulations_in_football_scoring_are_the_forecast_again() -> None:
    from livemon.rating.standings import reweigh

    res = [Result(i, j, 0.5 if (i + j) % 3 else 1.0) for i in range(6) for j in range(i + 1, 6) if j - i > 2]
    state = EventState([f"P{i}" for i in range(6)], list(np.linspace(2500, 2700, 6)), "rr", rounds=5, results=res,
                       ongoing=[(0, 1, (0.3, 0.5, 0.2))], points=Points.parse("3-1-0"))
    kept = simulate(state, 20_000, seed=2, keep=True)
    again = reweigh(kept.sims, state) if kept.sims is not None else None
    plain = simulate(state, 20_000, seed=2)
    assert again is not None
    for x, y, z in zip(again.players, kept.players, plain.players):
        assert (x.score, x.max_score, x.needs) == (y.score, y.max_score, y.needs) == (z.score, z.max_score, z.needs)
        assert x.expected_score == pytest.approx(z.expected_score)


def test_one_game_left_matches_the_game_model() -> None:
    # A and B level on 1, C out of it: A v B decides first; a draw shares it; colours unknown: both halves
    state = EventState(["A", "B", "C"], [2600, 2500, 2400], "rr", rounds=3,
                       results=[Result(0, 2, 1.0), Result(2, 1, 0.0)])
    f = simulate(state, 200_000, seed=5)
    w, d, lo = pregame(2600, 2500)
    w2, d2, lo2 = pregame(2500, 2600)
    a_share = ((w + d / 2) + (lo2 + d2 / 2)) / 2
    assert f.players[0].p_first == pytest.approx(a_share, abs=0.005)
    assert f.players[1].p_first == pytest.approx(1 - a_share, abs=0.005)
    # with Berger numbers (A 1, B 2, C 3: round 2 of a 3-player table is 1-2) A has White
    state.numbers = [1, 2, 3]
    f = simulate(state, 200_000, seed=5)
    assert f.players[0].p_first == pytest.approx(w + d / 2, abs=0.005)
    assert f.players[2].p_first == 0.0
    assert f.players[0].needs == 1.5 and f.players[1].needs == 1.5


def test_clinched_and_finished() -> None:
    # four players, A has won all three and nobody can catch her
    res = [Result(0, 1, 1.0), Result(0, 2, 1.0), Result(3, 0, 0.0), Result(1, 2, 0.5)]
    f = simulate(EventState(list("ABCD"), [2000, 2700, 2700, 2700], "rr", rounds=3, results=res), 1000, seed=1)
    assert f.players[0].p_first == 1.0 and f.players[0].p_winner == 1.0


def test_tiebreaks_decide_between_the_tied() -> None:
    # finished: A and B on 2, A beat B; direct encounter gives A the title, the plain share splits it
    res = [Result(0, 1, 1.0), Result(0, 2, 0.0), Result(1, 2, 1.0), Result(2, 3, 0.0), Result(3, 0, 0.0),
           Result(1, 3, 1.0)]
    base = EventState(list("ABCD"), [2500] * 4, "rr", rounds=3, results=res)
    assert [x.p_first for x in simulate(base, 100, seed=0).players] == [0.5, 0.5, 0.0, 0.0]
    base.tiebreaks = ("direct",)
    assert [x.p_winner for x in simulate(base, 100, seed=0).players] == [1.0, 0.0, 0.0, 0.0]


def test_berger_tables_are_complete_round_robins() -> None:
    for n in (4, 5, 10, 14):
        rounds = berger(n)
        m = n + n % 2
        assert len(rounds) == m - 1
        pairs = [frozenset(p) for r in rounds for p in r]
        assert len(set(pairs)) == m * (m - 1) // 2
        whites = np.bincount([w for r in rounds for w, _ in r], minlength=m + 1)[1:]
        assert whites.max() - whites.min() <= 1


def test_double_round_robin_second_game_reverses_colours() -> None:
    state = EventState(["A", "B"], [2500, 2500], "drr", rounds=2, results=[Result(0, 1, 0.5)])
    f = simulate(state, 100_000, seed=3)
    w, d, lo = pregame(2500, 2500)  # B has White in the second game
    assert f.players[1].p_first == pytest.approx(w + d / 2, abs=0.006)


def _swiss_state(p: int, rounds_played: int, seed: int) -> EventState:
    rng = np.random.default_rng(seed)
    ratings = np.sort(rng.normal(2100, 250, p))[::-1]
    results = []
    for r in range(1, rounds_played + 1):
        order = rng.permutation(p)
        for k in range(0, p - 1, 2):
            results.append(Result(int(order[k]), int(order[k + 1]), float(rng.choice([0.0, 0.5, 1.0])), r))
    byes = []
    if p % 2:
        byes = [(int(rng.integers(p)), 1.0)]
    return EventState([f"P{i}" for i in range(p)], list(ratings), "swiss", rounds=rounds_played + 3,
                      results=results, byes=byes, rounds_played=rounds_played, tiebreaks=("buchholz", "sb"))


@pytest.mark.parametrize("p", [9, 30])
def test_swiss_is_sound(p: int) -> None:
    state = _swiss_state(p, 4, seed=p)
    f = simulate(state, 3000, seed=1)
    assert sum(x.p_first for x in f.players) == pytest.approx(1.0)
    assert sum(x.p_winner for x in f.players) == pytest.approx(1.0)
    leader = max(x.score for x in f.players)
    for x in f.players:
        assert min(x.distribution) >= x.score and x.max_score <= x.score + 3
        if x.score + 3 < leader:
            assert x.p_first == 0.0


def test_unknown_rounds_is_one_clear_error() -> None:
    state = _swiss_state(10, 3, seed=1)
    state.rounds = None
    with pytest.raises(ValueError, match="number of rounds is not known"):
        simulate(state, 100)
    with pytest.raises(ValueError, match="event format"):
        simulate(EventState(["A", "B"], [1, 2], "arena", rounds=1), 10)


def test_knockout() -> None:
    # 4 players; in the semi-final A leads B 1-0 with one game left, C and D have not started
    state = EventState(list("ABCD"), [2700, 2700, 2500, 2500], "ko", rounds=2, results=[Result(0, 1, 1.0, 1)],
                       bracket=[0, 1, 2, 3], rounds_played=0)
    f = simulate(state, 20000, seed=2)
    assert sum(x.p_first for x in f.players) == pytest.approx(1.0)
    assert f.players[0].p_first > f.players[1].p_first
    assert f.players[0].p_first > f.players[2].p_first


def test_fourteen_player_double_round_robin_speed() -> None:
    """100,000 simulations of a 14-player DRR from its start; the goal is 1 s on one core (here on a shared machine)."""
    state = EventState([f"P{i}" for i in range(14)], list(np.linspace(2650, 2800, 14)), "drr", rounds=26)
    t0 = time.process_time()
    simulate(state, 100_000, seed=0)
    assert time.process_time() - t0 < 5.0


def test_swiss_pairing_mends_a_repeat() -> None:
    # after two rounds A 2, B 1, C 1, D 0 (A-C and B-D in round 1, A-B and C-D in round 2): by score A-B and C-D
    # would meet again; A-D and B-C have not met
    from livemon.rating.standings import _Games, _swiss

    res = [Result(0, 2, 1.0, 1), Result(1, 3, 1.0, 1), Result(0, 1, 1.0, 2), Result(2, 3, 1.0, 2)]
    state = EventState(list("ABCD"), [2600, 2500, 2400, 2300], "swiss", rounds=3, results=res, rounds_played=2)
    games = _Games()
    _swiss(state, 500, np.random.default_rng(0), lambda w, b: np.tile([0.4, 0.3, 0.3], (len(w), 1)), games, 1)
    pairs = {frozenset(map(int, pair)) for a, b in zip(games.a, games.b) for pair in zip(a.ravel(), b.ravel())}
    assert pairs == {frozenset({0, 3}), frozenset({1, 2})}


def test_swiss_never_pairs_twice_on_a_real_open() -> None:
    """A real open (the 2025 broadcast's boards) cut after round 5, its last four rounds paired in every
    simulation: no pair meets twice, over the board or within a simulation, and colours alternate."""
    from pathlib import Path

    from livemon.app.forecast import load_params, read_event
    from livemon.config import EventConfig
    from livemon.rating.standings import _Games, _swiss

    src = Path(__file__).parent / "data" / "broadcast_2025_lezcano_montalvo_clk_lunahernandez.pgn"
    read = read_event([str(src)], EventConfig(), "swiss", 9, lambda line: None, load_params())
    state = read.state
    state.results = [r for r in state.results if (r.round or 0) <= 5]
    state.ongoing = []
    state.rounds_played = 5
    p = len(state.players)
    games = _Games()
    n = 400
    _swiss(state, n, np.random.default_rng(3), lambda w, b: np.tile([0.4, 0.3, 0.3], (len(w), 1)), games, 4)
    assert len(games.a) == 4
    met = {frozenset((r.white, r.black)) for r in state.results if not r.forfeit}
    whites = np.zeros((n, p), int)
    for r in state.results:
        if not r.forfeit:
            whites[:, r.white] += 1
            whites[:, r.black] -= 1
    repeats = 0
    for s in range(n):
        seen = set(met)
        for a, b in zip(games.a, games.b):
            for w, bl in zip(a[s].tolist(), b[s].tolist()):
                pair = frozenset((w, bl))
                repeats += pair in seen
                seen.add(pair)
    assert repeats == 0
    for a, b in zip(games.a, games.b):
        np.add.at(whites, (np.arange(n)[:, None], a), 1)
        np.add.at(whites, (np.arange(n)[:, None], b), -1)
    assert np.abs(whites).max() <= 3  # the colour balance stays near even (the players' own start counted)


def test_decided_events_are_exact_without_simulating() -> None:
    res = [Result(0, 1, 1.0), Result(0, 2, 1.0), Result(3, 0, 0.0), Result(1, 2, 0.5), Result(1, 3, 1.0),
           Result(2, 3, 0.5)]
    f = simulate(EventState(list("ABCD"), [2000, 2700, 2700, 2700], "rr", rounds=3, results=res), 100_000, seed=1)
    assert f.simulations == 0 and "no game is left" in f.notes[0]
    assert [x.p_first for x in f.players] == [1.0, 0.0, 0.0, 0.0] and f.players[1].distribution == {1.5: 1.0}
    # A has 3 of 3, the others at most 2.5 with one game each left: first is exact, the rest by convolution
    state = EventState(list("ABCD"), [2000, 2700, 2600, 2500], "rr", rounds=3, results=res[:4])
    exact = simulate(state, 100_000, seed=1)
    assert exact.simulations == 0 and "clinched" in exact.notes[0]
    assert exact.players[0].p_first == 1.0 and exact.players[0].needs == 3.0
    sim = simulate(state, 200_000, seed=1, exact=False)
    for x, y in zip(exact.players, sim.players):
        assert x.p_first == y.p_first and x.expected_score == pytest.approx(y.expected_score, abs=0.01)
        for score, prob in x.distribution.items():
            assert prob == pytest.approx(y.distribution.get(score, 0.0), abs=0.01)


def test_knockout_tiebreak_has_its_own_model() -> None:
    from livemon.rating.forecast import RAPID

    # a final level after its classical games: the tiebreak decides, each with its own model (Armageddon: a
    # draw is Black's, White by lot; rapid: two rapid games, then Armageddon)
    state = EventState(["A", "B"], [2800, 2600], "ko", rounds=1, results=[Result(0, 1, 0.5, 1), Result(1, 0, 0.5, 1)],
                       bracket=[0, 1], rounds_played=0)
    chances = {}
    for tb in ("elo", "rapid", "armageddon"):
        state.ko_tiebreak = tb
        f = simulate(state, 40_000, seed=4)
        assert f.players[0].p_first + f.players[1].p_first == pytest.approx(1.0)
        chances[tb] = f.players[0].p_first
    assert chances["elo"] == pytest.approx(1 / (1 + 10 ** (-0.5)), abs=0.01)
    w1, d1, l1 = pregame(2800, 2600, RAPID)  # A White
    w2, d2, l2 = pregame(2600, 2800, RAPID)  # B White
    armageddon = 0.5 * w1 + 0.5 * (l2 + d2)
    assert chances["armageddon"] == pytest.approx(armageddon, abs=0.01)
    a_game1 = {2: w1, 1: d1, 0: l1}
    a_game2 = {2: l2, 1: d2, 0: w2}
    two = {}
    for x, px in a_game1.items():
        for y, py in a_game2.items():
            two[x + y] = two.get(x + y, 0.0) + px * py
    rapid = sum(q for h, q in two.items() if h > 2) + two[2] * armageddon
    assert chances["rapid"] == pytest.approx(rapid, abs=0.01)
    assert RAPID.k < 1.0 and abs(chances["rapid"] - chances["elo"]) > 0 and chances["armageddon"] > 0.5
    state.ko_tiebreak = "coin"
    with pytest.raises(ValueError, match="knockout tiebreak"):
        simulate(state, 10)


def test_kept_simulations_weighed_again_match_a_new_simulation() -> None:
    from livemon.rating.standings import reweigh

    # 8 players, 2 rounds left, two games in progress
    res = [Result(i, j, 0.5 if (i + j) % 3 else 1.0) for i in range(8) for j in range(i + 1, 8) if j - i > 2]
    state = EventState([f"P{i}" for i in range(8)], list(np.linspace(2500, 2700, 8)), "rr", rounds=7, results=res,
                       ongoing=[(0, 1, (0.3, 0.5, 0.2)), (2, 3, (0.3, 0.5, 0.2))])
    kept = simulate(state, 100_000, seed=2, keep=True)
    assert kept.sims is not None and kept.ess == pytest.approx(100_000)
    again = reweigh(kept.sims, state)
    assert again is not None and [x.p_first for x in again.players] == pytest.approx([x.p_first for x in kept.players])
    state.ongoing = [(0, 1, (0.6, 0.3, 0.1)), (2, 3, (0.1, 0.5, 0.4))]
    moved = reweigh(kept.sims, state)
    fresh = simulate(state, 100_000, seed=9)
    assert moved is not None and moved.ess is not None and moved.ess < 100_000
    for x, y in zip(moved.players, fresh.players):
        assert x.p_first == pytest.approx(y.p_first, abs=0.01)
        assert x.expected_score == pytest.approx(y.expected_score, abs=0.01)
    assert sum(x.p_first for x in moved.players) == pytest.approx(1.0)
    state.ongoing = [(0, 1, (1.0, 0.0, 0.0)), (2, 3, (0.0, 0.0, 1.0))]  # both decided: most simulations worthless
    assert reweigh(kept.sims, state) is None
    state.ongoing = [(0, 2, (0.3, 0.5, 0.2))]  # not the same games
    assert reweigh(kept.sims, state) is None
