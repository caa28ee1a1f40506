"""The forecast replayed on finished real events, and timed (``python bench/forecast.py calibrate|timing``).

Every complete round robin of the data (every pair met once, or twice for a double round robin; rounds tagged)
and the one complete Swiss open (the Grand Swiss 2021, a fit event) are cut after a third, a half and two
thirds of their rounds; the forecast of first place from each cut is scored against who did finish first (a
shared first counts as a share to each):

* **forecast**: the shipped game model (livemon/data/forecast.json);
* **ratings, fixed draw**: the Elo expected score with the fit set's draw rate, no White edge, no level effect;
* **standings alone**: every remaining game the same for everyone (the fit set's draw rate, wins even).

Events are reported apart by whether the game model's fit saw their games: held back (the calibration set's
held-back events, London 2011 and the 2025 round robin) or fit events (in-sample for the game model; the
forecast's own simulation has no fitted part).
"""

from __future__ import annotations

import math
import os
import time
from collections import defaultdict
from pathlib import Path

from typing import Any, Coroutine

import numpy as np

import forecast_data as fd
from livemon.rating.forecast import DEFAULT, pregame_arrays
from livemon.rating.standings import EventState, Result, infer_numbers, simulate

FIT_DRAW = 0.361
"""The draw rate of the pre-game fit's games (bench/forecast.py fit prints it)."""
CUTS = (1 / 3, 1 / 2, 2 / 3)
LONDON = "london_chess_classic_2011_twic.pgn"
BINS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0001)


def fixed_draw(rw: np.ndarray, rb: np.ndarray) -> np.ndarray:
    e = 1.0 / (1.0 + 10 ** (-(rw - rb) / 400.0))
    return np.stack([(1 - FIT_DRAW) * e, np.full_like(e, FIT_DRAW), (1 - FIT_DRAW) * (1 - e)], axis=1)


def even(rw: np.ndarray, rb: np.ndarray) -> np.ndarray:
    half = (1 - FIT_DRAW) / 2
    return np.tile([half, FIT_DRAW, half], (len(rw), 1))


MODELS = {
    "forecast": lambda w, b: pregame_arrays(w, b, DEFAULT),
    "ratings, fixed draw": fixed_draw,
    "standings alone": even,
}


def _round(g: fd.Game) -> int | None:
    head = g.round.split(".", 1)[0]
    return int(head) if head.isdigit() else None


class Event:
    def __init__(self, name: str, games: list[fd.Game], held_back: bool):
        self.name, self.held_back = name, held_back
        self.games = [g for g in games if g.result is not None and _round(g) is not None]
        keys = sorted({k for g in self.games for k in (g.white, g.black)})
        self.index = {k: i for i, k in enumerate(keys)}
        self.players = keys
        rating: dict[str, float] = {}
        for g in self.games:
            for k, white in ((g.white, True), (g.black, False)):
                r = g.rating(white)
                if r is not None:
                    rating[k] = float(r)
        self.ratings = [rating.get(k, 1400.0) for k in keys]
        self.rounds = max(_round(g) or 0 for g in self.games) if self.games else 0
        boards = [(_round(g) or 0, int(g.round.split(".")[1]), self.index[g.white], self.index[g.black])
                  for g in self.games if g.round.count(".") == 1 and g.round.split(".")[1].isdigit()]
        self.numbers = infer_numbers(len(keys), boards)

    def kind(self) -> str | None:
        n = len(self.players)
        pairs: dict[tuple[int, int], int] = defaultdict(int)
        for g in self.games:
            a, b = self.index[g.white], self.index[g.black]
            pairs[(min(a, b), max(a, b))] += 1
        if n >= 4 and len(pairs) == n * (n - 1) // 2:
            legs = set(pairs.values())
            if legs == {1} and self.rounds >= n - 1:
                return "rr"
            if legs == {2} and self.rounds >= 2 * (n - 1):
                return "drr"
        return None

    def results(self, upto: int) -> list[Result]:
        return [Result(self.index[g.white], self.index[g.black], float(g.result), _round(g), not g.moves)
                for g in self.games if (_round(g) or 0) <= upto and g.result is not None]

    def winner_shares(self) -> np.ndarray:
        s = np.zeros(len(self.players))
        for r in self.results(self.rounds):
            s[r.white] += r.score
            s[r.black] += 1 - r.score
        top = s == s.max()
        return top / top.sum()


def events(folder: Path) -> tuple[list[Event], list[Event]]:
    """(round robins, Swiss opens), complete ones only."""
    by_event: dict[str, list[fd.Game]] = defaultdict(list)
    for g in fd.calibration_games(folder):
        if g.part is not None:
            by_event[g.event].append(g)
    rrs, swiss = [], []
    for name, games in sorted(by_event.items()):
        ev = Event(name, games, name in fd.TEST_EVENTS)
        if ev.kind():
            rrs.append(ev)
        elif name == "FIDE Grand Swiss 2021":
            swiss.append(ev)
    for file, held in ((LONDON, True), (fd.RR2025, True)):
        games = fd.real_games(fd.REAL / file)
        ev = Event(file.removesuffix(".pgn"), games, held)
        if ev.kind():
            rrs.append(ev)
    # the 2025 open's broadcast holds the top 56 boards of each round only (151 players seen, some rounds
    # missing): its scores are not the event's, so it is no replay
    return rrs, swiss


def _score(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(log-loss, Brier) of first place: cross-entropy against the winners' shares, squared error summed."""
    ll = -float(np.sum(y * np.log(np.clip(p, 1e-6, 1))))
    return ll, float(np.sum((p - y) ** 2))


def replay(evs: list[Event], fmt_of: dict[str, str], sims: int) -> dict[str, list[tuple[str, bool, float, np.ndarray, np.ndarray]]]:
    """Per model, one row per (event, cut): name, held back, cut, forecast p_first, winners' shares."""
    rows: dict[str, list[tuple[str, bool, float, np.ndarray, np.ndarray]]] = defaultdict(list)
    for ev in evs:
        y = ev.winner_shares()
        for cut in CUTS:
            k = max(1, round(ev.rounds * cut))
            for name, model in MODELS.items():
                st = EventState(ev.players, ev.ratings, fmt_of[ev.name], ev.rounds, ev.results(k), rounds_played=k,
                                numbers=ev.numbers if fmt_of[ev.name] in ("rr", "drr") else None)
                f = simulate(st, sims, seed=k, model=model)
                rows[name].append((ev.name, ev.held_back, cut, np.array([x.p_first for x in f.players]), y))
    return rows


def _table(rows: dict[str, list[tuple[str, bool, float, np.ndarray, np.ndarray]]], held: bool | None) -> None:
    for cut in (*CUTS, None):
        label = "all cuts" if cut is None else f"cut at {cut:.2f}"
        parts = []
        for name, rs in rows.items():
            sel = [r for r in rs if (held is None or r[1] == held) and (cut is None or r[2] == cut)]
            if not sel:
                continue
            ll = np.mean([_score(r[3], r[4])[0] for r in sel])
            br = np.mean([_score(r[3], r[4])[1] for r in sel])
            parts.append(f"{name}: log-loss {ll:.3f}, Brier {br:.3f}")
        n = len([r for r in rows["forecast"] if (held is None or r[1] == held) and (cut is None or r[2] == cut)])
        if parts:
            print(f"    {label} ({n} forecasts): " + "; ".join(parts))


def _reliability(rows: list[tuple[str, bool, float, np.ndarray, np.ndarray]]) -> None:
    p = np.concatenate([r[3] for r in rows])
    y = np.concatenate([r[4] for r in rows])
    print("  reliability of the forecast's p_first (every player of every cut, round robins and opens):")
    print("    forecast      players  mean forecast  won (shares)")
    for lo, hi in zip(BINS[:-1], BINS[1:]):
        m = (p >= lo) & (p < hi)
        if m.any():
            print(f"    {100 * lo:3.0f}-{min(100, 100 * hi):3.0f}%   {int(m.sum()):8d}  {100 * p[m].mean():12.1f}%  "
                  f"{100 * y[m].mean():10.1f}%")


def run(folder: Path) -> None:
    rrs, swiss = events(folder)
    fmt_of = {ev.name: ev.kind() or "swiss" for ev in rrs + swiss}
    print(f"{len(rrs)} complete round robins ({sum(e.held_back for e in rrs)} held back; "
          f"{sum(e.numbers is not None for e in rrs)} follow the Berger tables by their Round tags): "
          + ", ".join(f"{e.name} ({len(e.players)}, {fmt_of[e.name]}{', held back' if e.held_back else ''})" for e in rrs))
    t0 = time.perf_counter()
    rows = replay(rrs, fmt_of, 20_000)
    print(f"round robins, first place (20,000 simulations per forecast, {time.perf_counter() - t0:.0f} s):")
    print("  held back:")
    _table(rows, True)
    print("  fit events (the game model saw their games):")
    _table(rows, False)
    print("  all:")
    _table(rows, None)
    t0 = time.perf_counter()
    srows = replay(swiss, fmt_of, 5_000)
    print(f"Swiss opens ({', '.join(f'{e.name}: {len(e.players)} players, {e.rounds} rounds' for e in swiss)}; "
          f"5,000 simulations per forecast, {time.perf_counter() - t0:.0f} s):")
    _table(srows, None)
    _reliability(rows["forecast"] + srows["forecast"])


def _reference(n: int, g: int) -> float:
    """The floor of any simulation of ``g`` games ``n`` times: one uniform per game drawn and compared, once."""
    rng = np.random.default_rng(0)
    best = math.inf
    for _ in range(2):  # the second run: memory already touched, as the simulation's chunks find it
        t0 = time.perf_counter()
        u = rng.random((n, g), dtype=np.float32)
        (u < 0.4).sum()
        best = min(best, time.perf_counter() - t0)
    return best


def _open_state(p: int, rounds: int, played: int, seed: int) -> EventState:
    """A ~``p``-player open after ``played`` rounds, its rounds so far played by the simulation's own pairing."""
    rng = np.random.default_rng(seed)
    ratings = list(np.clip(np.sort(rng.normal(1950, 280, p))[::-1], 1400, 2750))
    names = [f"P{i}" for i in range(p)]
    results: list[Result] = []
    byes: list[tuple[int, float]] = []
    for rnd in range(1, played + 1):  # a Dutch-like pairing by score, the top half against the bottom half
        score = np.zeros(p)
        for r in results:
            score[r.white] += r.score
            score[r.black] += 1 - r.score
        for i, pts in byes:
            score[i] += pts
        order = sorted(range(p), key=lambda i: (-score[i], -ratings[i]))
        if p % 2:
            byes.append((order.pop(), 1.0))
        for a in range(0, len(order), 2):
            w, b = order[a], order[a + 1]
            if rnd % 2:
                w, b = b, w
            q = pregame_arrays([ratings[w]], [ratings[b]])[0]
            u = rng.random()
            results.append(Result(w, b, 1.0 if u < q[0] else 0.5 if u < q[0] + q[1] else 0.0, rnd))
    return EventState(names, ratings, "swiss", rounds, results, byes, rounds_played=played,
                      tiebreaks=("buchholz", "sb"))


def timing() -> None:
    ratings = list(np.linspace(2650, 2800, 14))
    drr = EventState([f"P{i}" for i in range(14)], ratings, "drr", rounds=26)
    simulate(drr, 5_000, seed=0)  # warm
    load = os.getloadavg()[0]
    for label, st, n, g in (
        ("14-player double round robin from its start (182 games)", drr, 100_000, 182),
        ("the same with tiebreaks direct, sb", EventState(drr.players, ratings, "drr", 26, tiebreaks=("direct", "sb")),
         100_000, 182),
    ):
        ref = _reference(n, g)
        c0, t0 = time.process_time(), time.perf_counter()
        simulate(st, n, seed=1)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"{label}: {n:,} simulations in {wall:.2f} s wall, {cpu:.2f} s CPU (goal 1 s on one core); "
              f"reference (one uniform per game, drawn and compared) {ref:.3f} s: {wall / ref:.1f}x it; load {load:.1f}")
    st = _open_state(250, 10, 7, seed=7)
    for n in (20_000, 5_000):
        ref = _reference(n, 3 * 125)
        c0, t0 = time.perf_counter(), time.process_time()
        f = simulate(st, n, seed=2)
        wall, cpu = time.perf_counter() - c0, time.process_time() - t0
        print(f"250-player 10-round open cut after round 7 (tiebreaks buchholz, sb): {n:,} simulations in {wall:.2f} s "
              f"wall, {cpu:.2f} s CPU (goal <= 5 s); reference {ref:.3f} s: {wall / ref:.0f}x it; p_first sums to "
              f"{sum(x.p_first for x in f.players):.6f}; load {os.getloadavg()[0]:.1f}")


class _FakeMove:
    def __init__(self, eval_cp: int | None, clock: float | None) -> None:
        self.eval_cp = eval_cp
        self.clock = clock


class _FakeGame:
    """What the live forecast reads of a monitor's game: plies, evaluations, moves (their clocks), the newest FEN."""

    def __init__(self, plies: int, cp: int) -> None:
        self.plies = plies
        self.evals: list[int | None] = [None] * plies + [cp]
        self.fen = "r3k2r/pp3ppp/2n5/3p4/3P4/2N5/PP3PPP/R3K2R w KQkq - 0 20"
        self.moves: list[_FakeMove] = [_FakeMove(None, 5400.0 - 30 * (k // 2)) for k in range(plies)]

    def move(self, cp: int) -> None:
        """One more ply, its clock, and the engine's value of the new position."""
        self.plies += 1
        self.moves.append(_FakeMove(None, 5400.0 - 30 * (self.plies // 2)))
        self.evals.append(cp)


class _FakeCore:
    """A monitor's state, as the live forecast reads it: the event's finished rounds and one round in progress."""

    def __init__(self, st: EventState, live_round: int, seed: int) -> None:
        from livemon.live.messages import GameInfo

        rng = np.random.default_rng(seed)
        self.infos: dict[str, GameInfo] = {}
        self.results: dict[str, str] = {}
        self.games: dict[str, _FakeGame] = {}
        self.live: list[str] = []
        for i, r in enumerate(st.results):
            gid = f"r{r.round}/{i}"
            self.infos[gid] = GameInfo(gid, st.players[r.white], st.players[r.black], int(st.ratings[r.white]),
                                       int(st.ratings[r.black]), "Open", f"{r.round}.{i}", "2025.04.12")
            self.results[gid] = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[r.score]
            self.games[gid] = _FakeGame(80, 0)
        # the round in progress: the top half of the standings against the bottom half of each score group
        score = np.zeros(len(st.players))
        for r in st.results:
            score[r.white] += r.score
            score[r.black] += 1 - r.score
        order = sorted(range(len(st.players)), key=lambda i: (-score[i], -st.ratings[i]))
        for b in range(len(order) // 2):
            w, bl = order[2 * b], order[2 * b + 1]
            gid = f"r{live_round}/{b}"
            self.infos[gid] = GameInfo(gid, st.players[w], st.players[bl], int(st.ratings[w]), int(st.ratings[bl]),
                                       "Open", f"{live_round}.{b + 1}", "2025.04.12")
            self.games[gid] = _FakeGame(int(rng.integers(10, 80)), int(rng.normal(0, 150)))
            self.live.append(gid)
        self.moves_made = 0


def _pace(core: _FakeCore, plies_per_s: float, results_per_s: float, seconds: float, seed: int,
          times: list[float]) -> "Coroutine[Any, Any, None]":
    """A round at a pace: ``plies_per_s`` moves (each with its engine value) and ``results_per_s`` results, spread
    over the games in progress; ``times[i]`` is when move or result ``i + 1`` came."""
    import asyncio

    async def go() -> None:
        rng = np.random.default_rng(seed)
        rate = plies_per_s + results_per_s
        start = time.perf_counter()
        due = start
        while time.perf_counter() - start < seconds and core.live:
            due += rng.exponential(1 / rate)
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            gid = core.live[int(rng.integers(len(core.live)))]
            game = core.games[gid]
            if rng.random() < results_per_s / rate:
                last = game.evals[-1] or 0
                core.results[gid] = "1-0" if last > 150 else "0-1" if last < -150 else "1/2-1/2"
                core.live.remove(gid)
            else:
                game.move(int((game.evals[-1] or 0) + rng.normal(0, 40)))
            core.moves_made += 1
            times.append(time.perf_counter())

    return go()


def live_timing(seconds: float = 30.0) -> None:
    """The live forecast at a 1,000-board round's pace: from a move (or a result) to the forecast that holds it
    published, and the event loop's stalls meanwhile, against the same round without the forecast."""
    import asyncio

    from livemon.app.forecast_live import LiveForecast
    from livemon.config import EventConfig
    from livemon.faces.hub import Hub
    from livemon.rating.standings import berger

    for players, label, plies_per_s, results_per_s in (
            (14, "a 14-player round robin, round 8 in progress", 1.0, 0.02),
            (2000, "a 2,000-player open, round 8 of 10 in progress (1,000 boards)", 1000 / 30, 1000 / 3600)):
        if players == 14:
            st = EventState([f"P{i}" for i in range(14)], list(np.linspace(2650, 2800, 14)), "rr", 13,
                            [Result(w - 1, b - 1, 0.5, r + 1) for r, rnd in enumerate(berger(14)[:7]) for w, b in rnd])
            cfg = EventConfig(format="rr", rounds=13, live_seconds=1.0)
        else:
            st = _open_state(players, 10, 7, seed=3)
            cfg = EventConfig(format="swiss", rounds=10, tiebreaks=["buchholz", "sb"], live_seconds=1.0)

        async def measure(with_forecast: bool, process: bool = True, st: EventState = st, cfg: EventConfig = cfg,
                          plies_per_s: float = plies_per_s,
                          results_per_s: float = results_per_s) -> dict[str, float]:
            core = _FakeCore(st, 8, seed=1)
            hub = Hub()
            job = LiveForecast(cfg, hub, process=process)
            times: list[float] = []
            marks: list[tuple[int, float]] = []  # (moves the message holds, when it was published)
            cpus: list[float] = []  # each forecast's CPU seconds (its thread's)
            held: dict[int, int] = {0: 0}  # the job's version -> the moves made when it saw them
            original_update, original_once, original_publish = job.update, job.once, hub.publish

            def update(c: Any) -> bool:  # the job's version: the moves it holds
                moved = original_update(c)
                held[job.version] = core.moves_made
                return moved

            async def once(c: Any) -> Any:
                out = await original_once(c)
                if out:
                    cpus.append(job.last_cpu)
                return out

            def publish(msg: Any) -> None:
                marks.append((held.get(job.in_flight, 0), time.perf_counter()))
                original_publish(msg)

            job.update = update  # type: ignore[method-assign]
            job.once = once  # type: ignore[method-assign]
            hub.publish = publish  # type: ignore[method-assign]
            lags: list[float] = []
            done = False

            async def ticker() -> None:
                last = time.perf_counter()
                while not done:
                    await asyncio.sleep(0.005)
                    now = time.perf_counter()
                    lags.append(now - last - 0.005)
                    last = now

            tick = asyncio.create_task(ticker())
            if with_forecast:  # the state of the rounds so far: read once, before the round's pace is measured
                await job.once(core)
                marks.clear()
                cpus.clear()
                first_seconds = job.last_cpu
            job_task = asyncio.create_task(job.run(core)) if with_forecast else None
            c0, w0 = time.process_time(), job.worker_cpu
            await _pace(core, plies_per_s, results_per_s, seconds, 7, times)
            await asyncio.sleep(3.0 if with_forecast else 0.0)  # the last moves' forecast
            cpu = time.process_time() - c0 + job.worker_cpu - w0  # the loop's process and the forecaster's
            done = True
            if job_task is not None:
                job_task.cancel()
                await asyncio.gather(job_task, return_exceptions=True)
            await tick
            out = {"moves": float(len(times)), "cpu_share": cpu / (seconds + (3.0 if with_forecast else 0.0)),
                   "lag_p99": float(np.percentile(lags, 99)), "lag_max": max(lags)}
            if with_forecast:
                lat = []
                for i, t in enumerate(times, start=1):
                    pub = next((when for held, when in marks if held >= i), None)
                    if pub is not None:
                        lat.append(pub - t)
                out.update(first=first_seconds, forecasts=float(len(cpus)), messages=float(len(marks)),
                           covered=len(lat) / max(len(times), 1),
                           lat_median=float(np.median(lat)), lat_p95=float(np.percentile(lat, 95)), lat_max=max(lat),
                           sims=float(job.simulations), cpu_median=float(np.median(cpus)), cpu_max=max(cpus),
                           simulated=float(job.simulated - 1), weighed=float(job.weighed),
                           in_process=float(job.process))
            return out

        base = asyncio.run(measure(False))
        for process in (False, True):  # the same round, the forecast in a thread, then in a process of its own
            got = asyncio.run(measure(True, process))
            print(f"live forecast of {label}: {got['moves']:.0f} moves and results in {seconds:.0f} s; "
                f"{got['forecasts']:.0f} forecasts ({got['simulated']:.0f} simulated, {got['weighed']:.0f} weighed "
                f"again; {got['messages']:.0f} messages, a first chunk published at once), CPU per forecast median "
                f"{got['cpu_median']:.2f} s, longest {got['cpu_max']:.2f} s (the first, "
                f"reading the rounds so far, {got['first']:.2f} s); "
                f"move -> forecast published: median {got['lat_median']:.2f} s, 95th percentile {got['lat_p95']:.2f} s, "
                f"longest {got['lat_max']:.2f} s (goal 2 s: {got['lat_p95'] / 2:.2f}x it at the 95th percentile); "
                f"{100 * got['covered']:.0f}% of the moves covered; "
                f"{'in a process of its own' if got['in_process'] else 'in a thread'}; the CPU (the monitor's process "
                f"and the forecaster's) {100 * got['cpu_share']:.0f}% of one core; "
                f"event loop stalls: 99th percentile {1000 * got['lag_p99']:.0f} ms, longest "
                f"{1000 * got['lag_max']:.0f} ms (without the forecast {1000 * base['lag_p99']:.0f} ms, "
                f"{1000 * base['lag_max']:.0f} ms); load {os.getloadavg()[0]:.1f}")
