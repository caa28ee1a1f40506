"""The fixed split of the calibration collection into fit and held-back games, and the analysis plan.

The collection (PGN files ``A01_…`` to ``A16_…`` of TWIC issues and tournament sites, not in this
repository: only its analyses are, in ``bench/data``) is the folder given by ``$LIVEMON_CALIBRATION_GAMES``.

The split is **by event**: every game of a held-back event is kept out of every
fit (calibration lines, the headline estimate's mapping, z_scale) and is used only
by ``bench/validity.py`` and ``bench/screening_honest.py``. Rapid events (A03, A14) are in neither part: their Elo
tags are standard ratings and the play is not classical.

Held back (``FIRST_TEST_EVENTS``), chosen before any analysis was run, to cover the
rating bands of ``bench/validity.py``: an elite round robin (Prague Masters 2022,
2610-2723), two norm round robins (Charlotte Spring IMB 2022, 2116-2400; Ekrem
Galijatovic Memorial, 1750-2379) and an open with the set's lowest ratings
(1st Guwahati Open 2022, 1103-2641; its games in both TWIC issues). A second
held-back set (``HELD_BACK_2``, ``plan-heldback`` below) was drawn later the same
way; ``TEST_EVENTS`` is both. Every other classical event is fit data.

Engine time is scarce (depth 12 MultiPV 4 runs ~2.5 positions/s per core), so
not every game is analysed: the round robins whole (so that every player has an
event of 9 games), the Guwahati open's games with a player under 1800 plus a
sample, and a sample of the fit events stratified by the game's mean rating (the
low bands over-sampled). ``plan`` writes the selected games as PGN chunks of 10
games, held-back and fit chunks alternating, so that an analysis stopped at any
chunk leaves both parts usable.

A second round of analysis (``plan-extra``) completes whole multi-game events,
above all those with players under 1800 and Swiss/open events, so that every
player of them has an event's worth of games. No new event is held back: the
added events are fit data (``part`` unchanged) and every bench measures them
leave-one-event-out. In order, until the engine time runs out:

1. ch-VIE 2022 (a 9-round Swiss, 1716-2522): the games of its players under 2000
   first, lowest first, then the rest round by round;
2. 44th Olympiad 2022: the games of its players under 1800 who played all five
   rounds, player by player from the lowest rating, so that each such
   player-event is complete before the next starts;
3. ch-SRB Semi-Final 2022 (a Swiss, 1590-2519), round by round.

A third plan (``plan-elite``) completes the elite round robins (every player
2600+), event by event in ``ELITE_EVENTS``' order, so that the band at 2500 and
above has more than a dozen player-events of 7+ games.

A fourth plan (``plan-rapid``) samples the rapid championships (A03: ch-ROU Rapid 2022 and its women's
section), which are in neither part: never fitted, they are a measure of honest players under 1800 at a
faster time control. Players under 1800 with 3+ games in the file, lowest rated first, each with all their
games (then those with 2 games), until the engine time runs out; their export is
``bench/data/calibration_rapid_d12.jsonl.gz`` (part ``rapid``), read only by ``bench/screening_honest.py``.

A fifth plan (``plan-open``) adds an open: the Primavera Cattolica Open 2022 (a 9-round open, 1698-2606, most
players 2000-2200: the band whose estimates run high), whole player-events of its players, lowest rated first,
each with all their games; fit data (``part`` unchanged), measured leave-one-event-out like the other added events.
Its first 50 games are ``calibration_d12_extra5.jsonl.gz``; the plan made again with ``--skip`` of every export gives
the rest, of which the next 95 (and one game of another event) are ``calibration_d12_extra6.jsonl.gz`` and the last
101 (the plan made once more) ``calibration_d12_extra7.jsonl.gz``: every game of the open with 20+ plies.

A sixth plan (``plan-heldback``) analyses a second held-back set, chosen before any of its games was analysed
(``HELD_BACK_2``): the six classical norm round robins of the set with no game in an export (1927-2620, most
players 2100-2350; the IM ASK, Mediterranean Flower and Festival Jeunes events whole, three more of 15 games),
event by event, round by round. Held back like the first four: no fit reads them.

A seventh plan (``plan-heldback3``) analyses a third held-back set (``HELD_BACK_3``), chosen before any of its
games was analysed for it: the two groups of the Catalan team championship 2022 (rounds 7-8, 224 players with
one or two games, 118 of them rated 1800-2200), then the Czech U18/U20 championship 2022 (a junior round robin of
12 players, 2051-2430). Seven of their games were in the fit sample already; those games and their players'
other games stay out of it. Whole player-events, lowest rated first.

An eighth plan (``plan-guwahati``) completes the held-back open: the games of the 1st Guwahati Open 2022 that
its first plan left out (the files hold its top 20 boards of each of 10 rounds; the first plan took the games
with a player under 1800 and a sample). Whole player-events, the players with most games in the files first,
each round by round. The event was held back from the start: no fit reads it.

A ninth plan (``plan-olympiad``) completes the 44th Olympiad's weak end: whole player-events (4 or 5 games) of its
players rated under 2000, lowest rated first, each round by round; fit data like the rest of the Olympiad. Its
first 237 games were analysed on 16 cores at once (``bench/analyse_games.py``, ``bench/lent_machine.sh``:
``calibration_d12_extra8.jsonl.gz``), then 156 more on two engines, one from each end of the plan
(``calibration_d12_extra9.jsonl.gz``), then its last 199 (``calibration_d12_extra10.jsonl.gz``): every game of
the plan is analysed.

A tenth plan (``plan-rapid2``) completes the rapid championships for the screening line's rapid offset:
whole player-events of every level, the players with most games first, ch-ROU Rapid 2022 (``RAPID_FIT_EVENTS``:
the offset is fitted on its players) and ch-ROU Rapid Women 2022 (held back from that fit, with Saint Louis
Rapid 2022: ``RAPID_TEST_EVENTS``) alternating game by game; the games of ``plan-rapid`` skipped. Its export is
``calibration_rapid_d12_extra.jsonl.gz`` (part ``rapid``), the whole plan on two engines here in an hour.

An eleventh plan (``plan-rapid3``) analyses the last rapid event, Saint Louis Rapid 2022 (ten players rated
2700 and up, held back from the rapid offset's fit), round by round: ``calibration_rapid_d12_extra2.jsonl.gz``.

Games already in an export (``--skip EXPORT``) are left out. Chunks hold 5 games,
so stopping the analysis at any time loses at most the chunk in progress.

Usage::

    python bench/calibration_split.py OUTDIR     # writes OUTDIR/chunkNNN_{test,fit}.pgn
    python bench/calibration_split.py plan-extra OUTDIR --skip bench/data/calibration_d12.jsonl.gz
    python bench/calibration_split.py plan-elite OUTDIR --skip bench/data/calibration_d12*.jsonl.gz
    python bench/calibration_split.py plan-rapid OUTDIR
    python bench/calibration_split.py plan-rapid2 OUTDIR --skip bench/data/calibration_rapid_d12.jsonl.gz
    python bench/calibration_split.py plan-rapid3 OUTDIR
    python bench/calibration_split.py plan-open OUTDIR --skip bench/data/calibration_d12*.jsonl.gz
    python bench/calibration_split.py plan-heldback OUTDIR --skip bench/data/calibration_d12*.jsonl.gz
    python bench/calibration_split.py plan-heldback3 OUTDIR --skip bench/data/calibration_d12*.jsonl.gz
    python bench/calibration_split.py plan-guwahati OUTDIR --skip bench/data/calibration_d12*.jsonl.gz
    python bench/calibration_split.py plan-olympiad OUTDIR --skip bench/data/calibration_d12*.jsonl.gz
"""

from __future__ import annotations

import itertools
import json
import os
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import chess.pgn

from livemon.live.pgn import fide_id

REPO = Path(__file__).resolve().parent.parent


def calibration_games() -> Path:
    """The calibration collection's folder, ``$LIVEMON_CALIBRATION_GAMES`` (one line and exit when unset)."""
    folder = os.environ.get("LIVEMON_CALIBRATION_GAMES")
    if not folder:
        raise SystemExit("set LIVEMON_CALIBRATION_GAMES to the folder of the calibration collection (its A*.pgn "
                         "files): bench/data holds its analyses, not its games")
    return Path(folder)


FIRST_TEST_EVENTS = frozenset({
    "4th Prague Masters 2022",
    "Charlotte Spring IMB 2022",
    "8th Ekrem Galijatovic Mem",
    "1st Guwahati Open 2022",
})
# The second held-back set (``plan-heldback``): every classical norm round robin of the set of which no game had
# been analysed, chosen before any of them was: most of their players stand at 1950-2350, the band whose
# held-back figures rested on 19 player-events. Their results never entered a fit either (the field lag's sd is
# fitted on the analysed fit events' games).
HELD_BACK_2 = (
    "22nd Mediterranean Flower",
    "IM ASK 8 2022",
    "Moja Open GM/IM Norm 2022",
    "Vezerkepzo IM Mar 2022",
    "3rd Sat Djenovici Mar IM",
    "Festival Jeunes IM 2022",
)
# The third held-back set (``plan-heldback3``): the two groups of the Catalan team championship, the set's
# classical events whose players stand at 1800-2200 (where the held-back screening read low on 38 players) with
# the fewest games analysed (6 of 190, in the fit sample), then the set's one junior event, a round robin (1 of
# 66 analysed). The players of those 7 fit games are left out of it (so that no player-event mixes fitted and
# held-back games).
HELD_BACK_3 = ("TCh-CAT Gp1 2022", "TCh-CAT Gp2 2022", "ch-CZE U18 U20 2022")
# A fourth held-back event, outside the collection (which is all 2020-2022): a round robin played in February
# 2025, after FIDE's rating compression, of ten players rated 2211-2472 (its PGN, a lichess broadcast's, is in
# tests/data; ``calibration_data.py export-event``). It never entered a fit; it was analysed to see whether the
# held-back events' low screening reading is their era.
HELD_BACK_2025 = ("BBDDNRR 2025",)
TEST_EVENTS = FIRST_TEST_EVENTS | frozenset(HELD_BACK_2) | frozenset(HELD_BACK_3)
RAPID_FILES = ("A03_", "A14_")
SEED = 20221123
FIT_GAMES = 240
GUWAHATI_GAMES = 45


def elo(headers: chess.pgn.Headers, tag: str) -> int | None:
    v = headers.get(tag, "")
    return int(v) if v.isdigit() and int(v) > 0 else None


def part(event: str, filename: str, held_back: frozenset[str] = TEST_EVENTS) -> str | None:
    """``"test"``, ``"fit"`` or None (rapid: in neither) for a game of ``event`` in ``filename``."""
    if filename.startswith(RAPID_FILES):
        return None
    return "test" if event in held_back else "fit"


def game_chunks(text: str) -> list[str]:
    """A PGN file's text cut before each game's ``[Event`` tag: game ``i`` (1-based, the index the exports
    name) is chunk ``i - 1``."""
    chunks = ["[Event" + c for c in text.split("\n\n[Event")]
    chunks[0] = chunks[0][len("[Event"):]
    return chunks


def read_all(folder: Path | None = None, files: set[str] | None = None) -> list[tuple[str, int, str, chess.pgn.Headers, int]]:
    """(file, index, text, headers, plies) of every game of the set (of the ``files`` named), in file order."""
    out = []
    for path in sorted((folder or calibration_games()).glob("A*.pgn")):
        if files is not None and path.name not in files:
            continue
        for i, chunk in enumerate(game_chunks(path.read_text(encoding="ascii")), 1):
            game = chess.pgn.read_game(__import__("io").StringIO(chunk))
            if game is None:
                continue
            plies = sum(1 for _ in game.mainline_moves())
            out.append((path.name, i, chunk.strip() + "\n\n", game.headers, plies))
    return out


def select(games: list) -> tuple[list, list]:
    rng = random.Random(SEED)
    test, fit, guwahati = [], [], []
    for g in games:
        name, _, _, h, plies = g
        where = part(h.get("Event", ""), name, FIRST_TEST_EVENTS)  # the first plan's split, as it was drawn
        we, be = elo(h, "WhiteElo"), elo(h, "BlackElo")
        if where is None or plies < 20 or (we is None and be is None):
            continue
        if where == "test":
            (guwahati if h["Event"] == "1st Guwahati Open 2022" else test).append(g)
        elif we is not None and be is not None:
            fit.append(g)
    low = [g for g in guwahati if min(x for x in (elo(g[3], "WhiteElo"), elo(g[3], "BlackElo")) if x) < 1800]
    rest = [g for g in guwahati if g not in low]
    rng.shuffle(rest)
    test += (low + rest)[:GUWAHATI_GAMES]
    # fit: stratified by the game's mean rating in 200-point bands, equal share per band
    bands: dict[int, list] = {}
    for g in fit:
        m = (elo(g[3], "WhiteElo") + elo(g[3], "BlackElo")) // 2
        bands.setdefault(min(max(m // 200 * 200, 1400), 2600), []).append(g)
    for v in bands.values():
        rng.shuffle(v)
    chosen: list = []
    while len(chosen) < FIT_GAMES and any(bands.values()):
        for k in sorted(bands):
            if bands[k] and len(chosen) < FIT_GAMES:
                chosen.append(bands[k].pop())
    rng.shuffle(test)
    rng.shuffle(chosen)
    return test, chosen


def plan(outdir: Path) -> None:
    test, fit = select(read_all())
    outdir.mkdir(parents=True, exist_ok=True)
    n = 0
    for i in range(0, max(len(test), len(fit)), 10):
        for name, games in (("test", test[i:i + 10]), ("fit", fit[i:i + 10])):
            if games:
                (outdir / f"chunk{n:03d}_{name}.pgn").write_text("".join(g[2] for g in games), encoding="ascii")
                n += 1
    print(f"{len(test)} held-back games, {len(fit)} fit games, {n} chunks -> {outdir}")


EXTRA_EVENTS = ("ch-VIE 2022", "44th Olympiad 2022", "ch-SRB Semi-Final 2022")


def player_key(h: Mapping[str, str], colour: str) -> str:
    """A player of a game's tags (``colour`` White or Black) as every bench keys them: the FIDE id
    (:func:`livemon.live.pgn.fide_id`), else the name."""
    return fide_id(h.get(f"{colour}FideId")) or h.get(colour, "")


def _round(h: chess.pgn.Headers) -> tuple[int, int]:
    r, _, b = h.get("Round", "0").partition(".")
    return (int(r) if r.isdigit() else 0, int(b) if b.isdigit() else 0)


def _rated_games(games: list) -> tuple[dict[str, int], dict[str, int]]:
    """Per rated player of ``games`` (:func:`player_key`): the games they played in them, and their rating tag."""
    count: dict[str, int] = {}
    rating: dict[str, int] = {}
    for g in games:
        for c in ("White", "Black"):
            r = elo(g[3], f"{c}Elo")
            if r is not None:
                count[player_key(g[3], c)] = count.get(player_key(g[3], c), 0) + 1
                rating[player_key(g[3], c)] = r
    return count, rating


def select_extra(games: list, skip: set[tuple[str, int]]) -> list:
    """The games of the second round of analysis, in the order they should be analysed."""
    usable = [g for g in games if part(g[3].get("Event", ""), g[0]) == "fit" and g[4] >= 20
              and (g[0], g[1]) not in skip]
    order: list = []
    # 1. ch-VIE: games of players under 2000 first (lowest first), then round by round
    vie = sorted((g for g in usable if g[3]["Event"] == EXTRA_EVENTS[0]), key=lambda g: _round(g[3]))
    low = {}
    for g in vie:
        for c in ("White", "Black"):
            r = elo(g[3], f"{c}Elo")
            if r is not None and r < 2000:
                low[player_key(g[3], c)] = r
    for k in sorted(low, key=low.__getitem__):
        order += [g for g in vie if k in (player_key(g[3], "White"), player_key(g[3], "Black")) and g not in order]
    order += [g for g in vie if g not in order]
    # 2. Olympiad: whole 5-game player-events of players under 1800, lowest first
    oly = [g for g in games if g[3].get("Event") == EXTRA_EVENTS[1] and g[4] >= 20]
    count, rating = _rated_games(oly)
    for k in sorted((k for k, n in count.items() if n >= 5 and rating[k] < 1800), key=rating.__getitem__):
        order += [g for g in oly if k in (player_key(g[3], "White"), player_key(g[3], "Black"))
                  and (g[0], g[1]) not in skip and g not in order]
    # 3. ch-SRB Semi-Final, round by round
    order += sorted((g for g in usable if g[3]["Event"] == EXTRA_EVENTS[2]), key=lambda g: _round(g[3]))
    return order


ELITE_EVENTS = ("Superbet Classic 2022", "8th Sinquefield Cup 2021", "10th Norway Chess 2022", "FIDE Candidates 2022",
                "84th Tata Steel Masters", "9th Norway Chess 2021", "8th Norway Chess 2020")


def select_elite(games: list, skip: set[tuple[str, int]]) -> list:
    """The elite round robins' games, event by event, round by round."""
    return _whole_events(games, skip, ELITE_EVENTS, "fit")


def _whole_events(games: list, skip: set[tuple[str, int]], events: Sequence[str], where: str) -> list:
    """The games (20+ plies, not in ``skip``) of ``events`` in the part ``where``, event by event in their order,
    round by round."""
    usable = [g for g in games if part(g[3].get("Event", ""), g[0]) == where and g[4] >= 20
              and (g[0], g[1]) not in skip]
    return [g for event in events
            for g in sorted((g for g in usable if g[3]["Event"] == event), key=lambda g: _round(g[3]))]


def select_rapid(games: list, skip: set[tuple[str, int]]) -> list:
    """The rapid championships' games of players under 1800, whole player-events, most games and lowest first."""
    usable = [g for g in games if g[0].startswith(RAPID_FILES[0]) and g[4] >= 20 and (g[0], g[1]) not in skip]
    own: dict[tuple[str, str], list] = {}
    rating: dict[tuple[str, str], int] = {}
    for g in usable:
        for c in ("White", "Black"):
            r = elo(g[3], f"{c}Elo")
            if r is not None and r < 1800:
                key = (g[3]["Event"], player_key(g[3], c))
                own.setdefault(key, []).append(g)
                rating[key] = r
    order: list = []
    for k in sorted((k for k in own if len(own[k]) >= 2), key=lambda k: (len(own[k]) < 3, rating[k])):
        order += [g for g in own[k] if g not in order]
    return order


RAPID_FIT_EVENTS = ("ch-ROU Rapid 2022",)
"""The rapid events whose players fit the rapid line's offset (``bench/screening_honest.py``)."""
RAPID_TEST_EVENTS = ("ch-ROU Rapid Women 2022", "Saint Louis Rapid 2022")
"""The rapid events held back from that fit: measured only."""


def select_rapid2(games: list, skip: set[tuple[str, int]]) -> list:
    """The rapid championships' whole player-events (not in ``skip``), players with most games first (a seeded
    shuffle among equals), the open's (fit) and the women's (held back) alternating game by game, so that the
    engine time, wherever it runs out, leaves both parts."""
    streams = []
    for events in (RAPID_FIT_EVENTS, RAPID_TEST_EVENTS[:1]):
        usable = [g for g in games if g[0].startswith(RAPID_FILES[0]) and g[3].get("Event") in events and g[4] >= 20]
        count, _ = _rated_games(usable)
        keys = sorted(count)
        random.Random(SEED).shuffle(keys)
        order: list = []
        for k in sorted(keys, key=lambda k: -count[k]):
            order += sorted((g for g in usable if k in (player_key(g[3], "White"), player_key(g[3], "Black"))
                             and (g[0], g[1]) not in skip and g not in order), key=lambda g: _round(g[3]))
        streams.append(order)
    return [g for pair in itertools.zip_longest(*streams) for g in pair if g is not None]


def select_rapid3(games: list, skip: set[tuple[str, int]]) -> list:
    """Saint Louis Rapid 2022 (held back from the rapid offset's fit), round by round."""
    return sorted((g for g in games if g[0].startswith(RAPID_FILES[1]) and g[3].get("Event") == RAPID_TEST_EVENTS[1]
                   and g[4] >= 20 and (g[0], g[1]) not in skip), key=lambda g: _round(g[3]))


OPEN_EVENT = "Primavera Cattolica Open"


def select_open(games: list, skip: set[tuple[str, int]]) -> list:
    """The open's games, whole player-events of its rated players, lowest rated first."""
    usable = [g for g in games if g[3].get("Event") == OPEN_EVENT and part(OPEN_EVENT, g[0]) == "fit" and g[4] >= 20
              and (g[0], g[1]) not in skip]
    rating: dict[str, int] = {}
    for g in usable:
        for c in ("White", "Black"):
            r = elo(g[3], f"{c}Elo")
            if r is not None:
                rating[player_key(g[3], c)] = r
    order: list = []
    for k in sorted(rating, key=lambda k: (rating[k], k)):
        order += sorted((g for g in usable if k in (player_key(g[3], "White"), player_key(g[3], "Black")) and g not in order),
                        key=lambda g: _round(g[3]))
    return order


def select_olympiad(games: list, skip: set[tuple[str, int]]) -> list:
    """The Olympiad's games of its players under 2000 with 4+ games (20+ plies), whole player-events, lowest rated
    first, each round by round."""
    oly = [g for g in games if g[3].get("Event") == EXTRA_EVENTS[1] and part(EXTRA_EVENTS[1], g[0]) == "fit"
           and g[4] >= 20]
    count, rating = _rated_games(oly)
    order: list = []
    for k in sorted((k for k, n in count.items() if n >= 4 and rating[k] < 2000), key=lambda k: (rating[k], k)):
        order += sorted((g for g in oly if k in (player_key(g[3], "White"), player_key(g[3], "Black"))
                         and (g[0], g[1]) not in skip and g not in order), key=lambda g: _round(g[3]))
    return order


def select_heldback(games: list, skip: set[tuple[str, int]]) -> list:
    """The second held-back set's games, event by event in ``HELD_BACK_2``'s order, round by round."""
    return _whole_events(games, skip, HELD_BACK_2, "test")


def select_heldback3(games: list, skip: set[tuple[str, int]]) -> list:
    """The third held-back set's games (not in ``skip``, no player of a game in ``skip``), whole player-events,
    lowest rated first, the team championship's before the junior event's: the 1800-2200 band is complete first
    wherever the engine time runs out."""
    fitted = {(g[3]["Event"], player_key(g[3], c)) for g in games if g[3].get("Event") in HELD_BACK_3
              and (g[0], g[1]) in skip for c in ("White", "Black")}
    usable = [g for g in games if g[3].get("Event") in HELD_BACK_3 and g[4] >= 20 and (g[0], g[1]) not in skip
              and not {(g[3]["Event"], player_key(g[3], c)) for c in ("White", "Black")} & fitted]
    rating: dict[tuple[str, str], int] = {}
    for g in usable:
        for c in ("White", "Black"):
            r = elo(g[3], f"{c}Elo")
            if r is not None:
                rating[(g[3]["Event"], player_key(g[3], c))] = r
    order: list = []
    for event, k in sorted(rating, key=lambda k: (HELD_BACK_3.index(k[0]) == 2, rating[k], k)):
        order += sorted((g for g in usable if g[3]["Event"] == event and k in (player_key(g[3], "White"), player_key(g[3], "Black"))
                         and g not in order), key=lambda g: _round(g[3]))
    return order


GUWAHATI = "1st Guwahati Open 2022"


def select_guwahati(games: list, skip: set[tuple[str, int]]) -> list:
    """The held-back open's games not analysed yet (its first plan took those with a player under 1800 and a
    sample): whole player-events of its rated players, most games in the files first, each round by round, so
    that the players with an event's worth of games are complete first wherever the engine time runs out."""
    usable = [g for g in games if g[3].get("Event") == GUWAHATI and part(GUWAHATI, g[0]) == "test" and g[4] >= 20
              and (g[0], g[1]) not in skip]
    count: dict[str, int] = {}
    for g in games:
        if g[3].get("Event") == GUWAHATI:
            for c in ("White", "Black"):
                count[player_key(g[3], c)] = count.get(player_key(g[3], c), 0) + 1
    order: list = []
    for k in sorted(count, key=lambda k: (-count[k], k)):
        order += sorted((g for g in usable if k in (player_key(g[3], "White"), player_key(g[3], "Black")) and g not in order),
                        key=lambda g: _round(g[3]))
    return order


def _skipped(skip_exports: list[Path]) -> set[tuple[str, int]]:
    import gzip

    skip: set[tuple[str, int]] = set()
    for path in skip_exports:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            next(f)
            skip |= {(r["file"], r["index"]) for r in map(json.loads, f)}
    return skip


def plan_extra(outdir: Path, skip_exports: list[Path], which: str = "plan-extra") -> None:
    skip = _skipped(skip_exports)
    games = {"plan-extra": select_extra, "plan-elite": select_elite, "plan-rapid": select_rapid,
             "plan-rapid2": select_rapid2, "plan-rapid3": select_rapid3,
             "plan-open": select_open, "plan-heldback": select_heldback,
             "plan-heldback3": select_heldback3, "plan-guwahati": select_guwahati,
             "plan-olympiad": select_olympiad}[which](read_all(), skip)
    outdir.mkdir(parents=True, exist_ok=True)
    name = {"plan-rapid": "rapid", "plan-rapid2": "rapid", "plan-rapid3": "rapid", "plan-heldback": "test",
            "plan-heldback3": "test", "plan-guwahati": "test"}.get(which, "fit")
    for n, i in enumerate(range(0, len(games), 5)):
        (outdir / f"chunk{n:03d}_{name}.pgn").write_text("".join(g[2] for g in games[i:i + 5]), encoding="ascii")
    # the same games with their names in the collection, for bench/analyse_games.py (no collection needed there)
    (outdir / "plan.jsonl").write_text("".join(json.dumps({"file": g[0], "index": g[1], "part": name, "pgn": g[2]}) + "\n"
                                               for g in games), encoding="ascii")
    print(f"{len(games)} {name} games in {(len(games) + 4) // 5} chunks -> {outdir}")


if __name__ == "__main__":
    if sys.argv[1] in ("plan-extra", "plan-elite", "plan-rapid", "plan-rapid2", "plan-rapid3", "plan-open", "plan-heldback",
                       "plan-heldback3", "plan-guwahati", "plan-olympiad"):
        plan_extra(Path(sys.argv[2]), [Path(a) for a in sys.argv[sys.argv.index("--skip") + 1:]]
                   if "--skip" in sys.argv else [], sys.argv[1])
    else:
        plan(Path(sys.argv[1]))
