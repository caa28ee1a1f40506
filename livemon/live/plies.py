"""A game's scored plies and its moves: one representation each, behind one interface — sans I/O.

Two containers, one per game: :class:`GamePlies` (the estimator's record of a game's
:class:`ScoredPly`, which the screener reads too) and :class:`GameMoves` (a live game's
:class:`~livemon.live.messages.MoveEvent` records, in :class:`~livemon.live.analysis.LiveGame`).
Each is appended to, cut back from a ply on a correction, read by index and iterated; how it
keeps its items is its own business:

- while a game goes on its newest items are objects and its settled ones are packed into
  flat arrays a chunk at a time (``pack(through)``: ~90 bytes a scored ply instead of ~500 as
  objects, ~30 a move instead of ~110);
- once it is finished and settled it is packed whole (``pack()``), and the driver may move the
  packed record out of memory onto a :class:`~livemon.live.shelf.Shelf` (``shelve``: the
  :class:`~livemon.live.effects.Shelve` effect, which the driver carries out); reads then go
  to the shelf;
- a correction of a packed or shelved game unpacks it (``truncate``), and every figure is what
  an unpacked run gives.

Adding a field to a ply touches :class:`ScoredPly` and its packed form here, nothing else.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

from livemon.live.memo import Memo
from livemon.live.messages import MoveEvent
from livemon.live.shelf import Shelf, Shelved
from livemon.rating.agent import Decision
from livemon.rating.evaluation import MAX_CP
from livemon.rating.gain import gain

@dataclass(frozen=True, slots=True)
class ScoredPly:
    """One ply with its evaluations (White's view, cp); ``before`` None = not scorable.

    ``uci``/``san`` name the move, ``forced`` says the position had one legal
    move and ``zobrist`` is the Polyglot key of the position before it: what
    fair-play screening needs to list a move and to leave out forced and
    book positions (:mod:`livemon.live.screener`).
    """

    game_id: str
    ply: int
    before: int | None
    after: int
    decision: Decision | None = None
    uci: str = ""
    san: str = ""
    forced: bool = False
    zobrist: int | None = None

    @property
    def white_moved(self) -> bool:
        return self.ply % 2 == 1

    @property
    def gain(self) -> int | None:
        return None if self.before is None else gain(self.before, self.after, self.white_moved)


_NO_CP = -(2**31)
"""``before`` of a ply that was not scorable, in :class:`PackedPlies`."""


class PackedPlies(Mapping[int, ScoredPly]):
    """A finished game's scored plies in a few flat arrays: ~90 bytes a ply instead of ~500 as objects.

    Read as the ``{ply: ScoredPly}`` it was made from (each :class:`ScoredPly` is made again
    on access, equal to the original); the estimator and the screener keep a finished game
    this way (memory over a long event), and unpack it if a correction comes.

    >>> d = Decision((0.3, 0.1, -0.2), 1)
    >>> plies = {1: ScoredPly("g", 1, 20, 30, d, "e2e4", "e4", False, 7), 2: ScoredPly("g", 2, None, 30, None, "e7e5", "e5")}
    >>> packed = PackedPlies(plies)
    >>> dict(packed) == plies, list(packed), 2 in packed, 3 in packed
    (True, [1, 2], True, False)
    """

    __slots__ = ("_after", "_before", "_forced", "_game_id", "_index", "_offsets", "_played", "_plies", "_san",
                 "_uci", "_values", "_zobrist")

    def __init__(self, plies: Mapping[int, ScoredPly]) -> None:
        items = sorted(plies.values(), key=lambda sp: sp.ply)
        self._game_id = items[0].game_id if items else ""
        self._plies = array("i", [sp.ply for sp in items])
        self._before = array("i", [_NO_CP if sp.before is None else sp.before for sp in items])
        self._after = array("i", [sp.after for sp in items])
        self._played = array("b", [-1 if sp.decision is None else sp.decision.played for sp in items])
        values: list[float] = []
        offsets = [0]
        for sp in items:
            if sp.decision is not None:
                values.extend(sp.decision.values)
            offsets.append(len(values))
        self._offsets, self._values = array("I", offsets), array("d", values)  # from lists: no spare room
        self._uci = " ".join(sp.uci for sp in items)
        self._san = " ".join(sp.san for sp in items)
        self._forced = bytes(sp.forced for sp in items)
        self._zobrist = None if all(sp.zobrist is None for sp in items) else (
            array("Q", [sp.zobrist or 0 for sp in items]), bytes(sp.zobrist is not None for sp in items))
        self._index_plies()

    def _index_plies(self) -> None:
        n = len(self._plies)
        self._index: dict[int, int] | None = None if list(self._plies) == list(range(1, n + 1)) else {
            ply: i for i, ply in enumerate(self._plies)}

    def extended(self, more: Mapping[int, ScoredPly]) -> PackedPlies:
        """These plies and ``more`` (each after them) packed, these not made again: a live game's plies are
        packed a chunk at a time (:meth:`GamePlies.pack`), each chunk at the cost of its own plies.

        >>> d = Decision((0.3, 0.1), 1)
        >>> plies = {k: ScoredPly("g", k, 20, 30, d if k % 2 else None, "e2e4", "e4", False, k if k > 2 else None)
        ...          for k in range(1, 6)}
        >>> PackedPlies({k: plies[k] for k in (1, 2)}).extended({k: plies[k] for k in (3, 5)}) == {
        ...     k: plies[k] for k in (1, 2, 3, 5)}
        True
        """
        new = PackedPlies(more)
        if not new._plies or not self._plies:
            return self if not new._plies else new
        out = object.__new__(PackedPlies)
        out._game_id = self._game_id
        out._plies, out._before, out._after = self._plies + new._plies, self._before + new._before, self._after + new._after
        out._played, out._values = self._played + new._played, self._values + new._values
        out._offsets = self._offsets + array("I", [o + self._offsets[-1] for o in new._offsets[1:]])
        out._uci, out._san = f"{self._uci} {new._uci}", f"{self._san} {new._san}"
        out._forced = self._forced + new._forced
        if self._zobrist is None and new._zobrist is None:
            out._zobrist = None
        else:
            a, b = (z._zobrist or (array("Q", bytes(8 * len(z))), bytes(len(z))) for z in (self, new))
            out._zobrist = (a[0] + b[0], a[1] + b[1])
        out._index_plies()
        return out

    def __len__(self) -> int:
        return len(self._plies)

    def __iter__(self) -> Iterator[int]:
        return iter(self._plies)

    def _at(self, ply: object) -> int:
        if type(ply) is not int:
            return -1
        if self._index is not None:
            return self._index.get(ply, -1)
        return ply - 1 if 1 <= ply <= len(self._plies) else -1

    def __contains__(self, ply: object) -> bool:
        return self._at(ply) >= 0

    def __getitem__(self, ply: int) -> ScoredPly:
        i = self._at(ply)
        if i < 0:
            raise KeyError(ply)
        return self._row(i, self._uci.split(" "), self._san.split(" "))

    def _row(self, i: int, ucis: list[str], sans: list[str]) -> ScoredPly:
        before, played = self._before[i], self._played[i]
        decision = None if played < 0 else Decision.checked(tuple(self._values[self._offsets[i]:self._offsets[i + 1]]), played)
        return ScoredPly(self._game_id, self._plies[i], None if before == _NO_CP else before, self._after[i],
                         decision, ucis[i], sans[i], bool(self._forced[i]),
                         None if self._zobrist is None or not self._zobrist[1][i] else self._zobrist[0][i])

    def items(self, plies: Iterable[int] | None = None) -> list[tuple[int, ScoredPly]]:  # type: ignore[override]
        """Every ``(ply, ScoredPly)`` in order, or only those of ``plies`` (the move strings split once)."""
        ucis, sans = self._uci.split(" "), self._san.split(" ")
        at = range(len(self._plies)) if plies is None else [i for i in map(self._at, plies) if i >= 0]
        return [(self._plies[i], self._row(i, ucis, sans)) for i in at]

    def values(self) -> list[ScoredPly]:  # type: ignore[override]
        """Every ply in order."""
        return [sp for _, sp in self.items()]

    def decisions_at(self, plies: Iterable[int]) -> list[tuple[int, Decision | None]]:
        """``(ply, decision)`` of each of ``plies`` held, in their order, without making their :class:`ScoredPly`
        (the screener's recount reads only these).

        >>> d = Decision((0.3, 0.1), 1)
        >>> packed = PackedPlies({k: ScoredPly("g", k, 20, 30, d if k != 3 else None, "e2e4", "e4") for k in range(1, 6)})
        >>> packed.decisions_at([3, 5, 9]) == [(3, None), (5, d)]
        True
        """
        played, offsets, values = self._played, self._offsets, self._values
        out: list[tuple[int, Decision | None]] = []
        for ply in plies:
            i = self._at(ply)
            if i >= 0:
                out.append((ply, None if played[i] < 0
                            else Decision.checked(tuple(values[offsets[i]:offsets[i + 1]]), played[i])))
        return out

    def decisions(self, side: int) -> list[tuple[int, Decision]]:
        """``(ply, decision)`` of one side's plies (``ply % 2``) that have a decision, in order, without
        making their :class:`ScoredPly` (a player's posterior and performance re-read only these).

        >>> d = Decision((0.3, 0.1), 1)
        >>> packed = PackedPlies({k: ScoredPly("g", k, 20, 30, d if k != 3 else None, "e2e4", "e4") for k in range(1, 6)})
        >>> packed.decisions(1) == [(1, d), (5, d)], packed.decisions(0) == [(2, d), (4, d)]
        (True, True)
        """
        plies, played, offsets, values = self._plies, self._played, self._offsets, self._values
        return [(plies[i], Decision.checked(tuple(values[offsets[i]:offsets[i + 1]]), played[i]))
                for i in range(len(plies)) if plies[i] % 2 == side and played[i] >= 0]


class ShelvedPlies(Shelved, Mapping[int, ScoredPly]):
    """A finished game's :class:`PackedPlies` put on a :class:`~livemon.live.shelf.Shelf`: read from it on
    access, as the same ``{ply: ScoredPly}``; in memory only its key and length.

    >>> plies = {1: ScoredPly("g", 1, 20, 30, Decision((0.3, 0.1), 1), "e2e4", "e4")}
    >>> shelf = Shelf()
    >>> shelved = ShelvedPlies(shelf, "g", PackedPlies(plies))
    >>> dict(shelved) == plies, len(shelved), 1 in shelved, shelved.items([1])[0][1].san
    (True, 1, True, 'e4')
    """

    __slots__ = ()

    def __init__(self, shelf: Shelf, key: str, packed: PackedPlies) -> None:
        super().__init__(shelf, key, packed, len(packed))

    @property
    def packed(self) -> PackedPlies:
        return self.record  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[int]:
        return iter(self.packed)

    def __contains__(self, ply: object) -> bool:
        return ply in self.packed

    def __getitem__(self, ply: int) -> ScoredPly:
        return self.packed[ply]

    def items(self, plies: Iterable[int] | None = None) -> list[tuple[int, ScoredPly]]:  # type: ignore[override]
        """As :meth:`PackedPlies.items`."""
        return self.packed.items(plies)

    def values(self) -> list[ScoredPly]:  # type: ignore[override]
        return self.packed.values()

    def decisions(self, side: int) -> list[tuple[int, Decision]]:
        """As :meth:`PackedPlies.decisions`."""
        return self.packed.decisions(side)

    def decisions_at(self, plies: Iterable[int]) -> list[tuple[int, Decision | None]]:
        """As :meth:`PackedPlies.decisions_at`."""
        return self.packed.decisions_at(plies)


class SplitPlies(Mapping[int, ScoredPly]):
    """A live game's scored plies: those through ply ``cut`` packed (:class:`PackedPlies`), the newer ones a dict.

    A live game's plies are several hundred bytes each as objects until the game finishes (the monitor's
    growth at 1,000 boards before their games end); its settled plies are packed a chunk at a time
    (:meth:`GamePlies.pack` with ``through``), the newest ones stay objects (they may still be corrected).

    >>> d = Decision((0.3, 0.1), 1)
    >>> plies = {k: ScoredPly("g", k, 20, 30, d if k % 2 else None, "e2e4", "e4") for k in range(1, 6)}
    >>> split = SplitPlies(PackedPlies({k: plies[k] for k in (1, 2, 3)}), 3, {5: plies[5], 4: plies[4]})
    >>> dict(split) == plies, list(split), len(split), 4 in split, 6 in split, split[2] == plies[2]
    (True, [1, 2, 3, 4, 5], 5, True, False, True)
    >>> [ply for ply, _ in split.items([5, 1, 4])]
    [1, 4, 5]
    """

    __slots__ = ("cut", "head", "tail")

    def __init__(self, head: PackedPlies, cut: int, tail: dict[int, ScoredPly]) -> None:
        self.head, self.cut, self.tail = head, cut, tail

    def __len__(self) -> int:
        return len(self.head) + len(self.tail)

    def __iter__(self) -> Iterator[int]:
        """The plies in order (the head's, then the tail's sorted: it fills in any order)."""
        yield from self.head
        yield from sorted(self.tail)

    def __contains__(self, ply: object) -> bool:
        return ply in self.tail or ply in self.head

    def __getitem__(self, ply: int) -> ScoredPly:
        sp = self.tail.get(ply)
        return sp if sp is not None else self.head[ply]

    def items(self, plies: Iterable[int] | None = None) -> list[tuple[int, ScoredPly]]:  # type: ignore[override]
        """As :meth:`PackedPlies.items`: every ``(ply, ScoredPly)`` in order, or those of ``plies``."""
        if plies is None:
            return self.head.items() + sorted(self.tail.items())
        wanted = sorted(plies)
        tail = self.tail
        return self.head.items(p for p in wanted if p <= self.cut) + [(p, tail[p]) for p in wanted if p in tail]

    def values(self) -> list[ScoredPly]:  # type: ignore[override]
        return [sp for _, sp in self.items()]

    def decisions(self, side: int) -> list[tuple[int, Decision]]:
        """As :meth:`PackedPlies.decisions`: the head's, then the tail's."""
        return self.head.decisions(side) + sorted(
            (ply, sp.decision) for ply, sp in self.tail.items() if ply % 2 == side and sp.decision is not None)


Plies = dict[int, ScoredPly] | SplitPlies | PackedPlies | ShelvedPlies
"""A game's scored plies: a dict while it may change, its settled part packed while it goes on
(:class:`SplitPlies`), all packed (and perhaps shelved) once finished."""


_NO_EVAL = -(2**31)


class PackedMoves(Sequence[MoveEvent]):
    """A compacted game's moves in a few flat arrays (~30 bytes a ply instead of ~250 as objects).

    Read as the list of :class:`MoveEvent` it was made from, without their FENs (the game's
    first FEN and the moves rebuild every position: :meth:`~livemon.live.analysis.LiveGame.expand`).

    >>> moves = [MoveEvent("g", 1, "e2e4", "e4", "", clock=5400.0), MoveEvent("g", 2, "e7e5", "e5", "", eval_cp=-20)]
    >>> packed = PackedMoves("g", moves)
    >>> list(packed) == moves, packed[-1].eval_cp, [m.san for m in packed[-2:]], len(packed)
    (True, -20, ['e4', 'e5'], 2)
    """

    __slots__ = ("_clock", "_emt", "_eval", "_feeds", "_game_id", "_san", "_uci")

    def __init__(self, game_id: str, moves: Sequence[MoveEvent]) -> None:
        nan = math.nan
        self._game_id = game_id
        self._uci = " ".join(m.uci for m in moves)
        self._san = " ".join(m.san for m in moves)
        self._clock = array("d", [nan if m.clock is None else m.clock for m in moves])
        self._emt = array("d", [nan if m.emt is None else m.emt for m in moves])
        self._eval = array("i", [_NO_EVAL if m.eval_cp is None else m.eval_cp for m in moves])
        feeds = {m.feed for m in moves}
        self._feeds: str | tuple[str, ...] = feeds.pop() if len(feeds) == 1 else tuple(m.feed for m in moves)

    def extended(self, moves: Sequence[MoveEvent]) -> PackedMoves:
        """These moves and ``moves`` (the next ones) packed, these not made again (:meth:`GameMoves.pack`).

        >>> moves = [MoveEvent("g", k, "e2e4", "e4", "", clock=60.0 * k, feed="a" if k < 4 else "b") for k in (1, 2, 3, 4)]
        >>> list(PackedMoves("g", moves[:2]).extended(moves[2:])) == moves
        True
        """
        new = PackedMoves(self._game_id, moves)
        if not len(new) or not len(self):
            return self if not len(new) else new
        out = object.__new__(PackedMoves)
        out._game_id = self._game_id
        out._uci, out._san = f"{self._uci} {new._uci}", f"{self._san} {new._san}"
        out._clock, out._emt, out._eval = self._clock + new._clock, self._emt + new._emt, self._eval + new._eval
        if isinstance(self._feeds, str) and self._feeds == new._feeds:
            out._feeds = self._feeds
        else:
            out._feeds = tuple(f for p in (self, new) for f in (
                p._feeds if isinstance(p._feeds, tuple) else (p._feeds,) * len(p)))
        return out

    def __len__(self) -> int:
        return len(self._eval)

    def texts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The moves' SANs and UCIs, read from the packed text without making a move object.

        >>> PackedMoves("g", [MoveEvent("g", 1, "e2e4", "e4", ""), MoveEvent("g", 2, "e7e5", "e5", "")]).texts()
        (('e4', 'e5'), ('e2e4', 'e7e5'))
        """
        if not len(self):
            return (), ()
        return tuple(self._san.split(" ")), tuple(self._uci.split(" "))

    @overload
    def __getitem__(self, i: int) -> MoveEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[MoveEvent]: ...

    def __getitem__(self, i: int | slice) -> MoveEvent | list[MoveEvent]:
        ucis, sans = self._uci.split(" "), self._san.split(" ")
        if isinstance(i, slice):
            return [self._move(k, ucis, sans) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._move(i, ucis, sans)

    def __iter__(self) -> Iterator[MoveEvent]:
        return iter(self[:])

    def _move(self, k: int, ucis: list[str], sans: list[str]) -> MoveEvent:
        clock, emt, cp = self._clock[k], self._emt[k], self._eval[k]
        return MoveEvent(self._game_id, k + 1, ucis[k], sans[k], "", None if math.isnan(clock) else clock,
                         None if math.isnan(emt) else emt, None if cp == _NO_EVAL else cp,
                         self._feeds if isinstance(self._feeds, str) else self._feeds[k])


class LiveMoves(Sequence[MoveEvent]):
    """A live game's moves: the settled ones packed (:class:`PackedMoves`), the newest ones objects
    (:meth:`GameMoves.pack`: a move object is ~110 bytes kept until the game finishes; packed, ~30).

    >>> moves = [MoveEvent("g", k, "e2e4" if k % 2 else "e7e5", "x", "", clock=60.0 * k) for k in range(1, 6)]
    >>> live = LiveMoves(PackedMoves("g", moves[:3]), moves[3:])
    >>> list(live) == moves, live[-1].ply, live[1].clock, [m.ply for m in live[2:4]], len(live)
    (True, 5, 120.0, [3, 4], 5)
    >>> [live[i].ply for i in (0, 2, 3, 4, -1, -2, -3, -5)], [m.ply for m in live[::2]]
    ([1, 3, 4, 5, 5, 4, 3, 1], [1, 3, 5])
    >>> live[5]  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    IndexError: 5
    >>> live[-6]  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    IndexError: -6
    """

    __slots__ = ("head", "tail")

    def __init__(self, head: PackedMoves, tail: list[MoveEvent]) -> None:
        self.head, self.tail = head, tail

    def __len__(self) -> int:
        return len(self.head) + len(self.tail)

    @overload
    def __getitem__(self, i: int) -> MoveEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[MoveEvent]: ...

    def __getitem__(self, i: int | slice) -> MoveEvent | list[MoveEvent]:
        n, tail = len(self.head), self.tail
        if isinstance(i, slice):
            start, stop, step = i.indices(n + len(tail))
            if step != 1:
                return [self[k] for k in range(start, stop, step)]
            return (self.head[start:min(stop, n)] if start < n else []) + tail[max(start - n, 0):max(stop - n, 0)]
        if i >= n:  # the live path reads the newest moves: the tail's, at a list's cost
            return tail[i - n]
        if i < 0:
            return tail[i] if -i <= len(tail) else self.head[i + len(tail)]
        return self.head[i]

    def __iter__(self) -> Iterator[MoveEvent]:
        yield from self.head
        yield from self.tail

    def append(self, ev: MoveEvent) -> None:
        self.tail.append(ev)

    def texts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The moves' SANs and UCIs: the packed head's text, then the newest moves'."""
        sans, ucis = self.head.texts()
        return sans + tuple(m.san for m in self.tail), ucis + tuple(m.uci for m in self.tail)


def _kept(ev: MoveEvent, game_id: str) -> MoveEvent:
    """``ev`` as a live game keeps it: without its FEN (~120 bytes a ply; only a game's first FEN is read,
    :attr:`~livemon.live.analysis.LiveGame.start_fen`, and a compacted game's moves have none either: :class:`PackedMoves`), and
    with one object for each of its values that repeat: the game's own id, one str per move text (UCI,
    SAN), one int per evaluation, one float per clock reading. A feed makes them anew for every move
    (the game id per poll): ~160 bytes a live ply kept until the game is compacted.

    >>> ev = MoveEvent("g", 1, "e2e4", "e4", "a FEN", clock=5400.0)
    >>> _kept(ev, "g")  # doctest: +NORMALIZE_WHITESPACE
    MoveEvent(game_id='g', ply=1, uci='e2e4', san='e4', fen_before='', clock=5400.0, emt=None, eval_cp=None,
              feed='', start_eval_cp=None, eval_mate=None)
    >>> again = MoveEvent("".join("g"), 1, "".join(["e2", "e4"]), "".join("e4"), "", clock=float("5400"))
    >>> kept = _kept(again, "g")
    >>> kept.uci is _kept(ev, "g").uci, kept.clock is _kept(ev, "g").clock, kept.game_id is _kept(ev, "g").game_id
    (True, True, True)
    """
    return MoveEvent(game_id, ev.ply, sys.intern(ev.uci), sys.intern(ev.san), "", _seconds(ev.clock),
                     _seconds(ev.emt), _shared(ev.eval_cp), ev.feed, eval_mate=ev.eval_mate)


_SECONDS = Memo[float, float](20_000)
"""One float object per clock reading (``[%clk]`` and ``[%emt]`` are whole seconds: a few thousand values)."""


def _seconds(s: float | None) -> float | None:
    """The one float object of a clock reading."""
    return None if s is None else _SECONDS.one(s)


_CP = Memo[int, int](2 * MAX_CP + 1)
"""One int object per evaluation value (at most 2 × MAX_CP + 1 of them, ~250 KB: never cleared)."""


def _shared(cp: int | None) -> int | None:
    """The one int object of an evaluation (an int above 256 is an object of its own: a board message's
    ~80 evaluations were ~2.5 KB of ints, kept per game and per message in the hub).

    >>> a, b = int("1234"), int("1234")
    >>> a is b, _shared(a) is _shared(b), _shared(None)
    (False, True, None)
    """
    if cp is None or not -MAX_CP <= cp <= MAX_CP:
        return cp
    return _CP.one(cp)


class ShelvedMoves(Shelved, Sequence[MoveEvent]):
    """A compacted game's :class:`PackedMoves` and evaluations put on a :class:`~livemon.live.shelf.Shelf`:
    read from it on access; in memory only its key and length.

    >>> from livemon.live.shelf import Shelf
    >>> moves = [MoveEvent("g", 1, "e2e4", "e4", ""), MoveEvent("g", 2, "e7e5", "e5", "", eval_cp=-20)]
    >>> shelved = ShelvedMoves(Shelf(), "g", PackedMoves("g", moves), [20, 30, -20])
    >>> list(shelved) == moves, shelved[-1].san, len(shelved), shelved.evals
    (True, 'e5', 2, (20, 30, -20))
    """

    __slots__ = ()

    def __init__(self, shelf: Shelf, key: str, moves: PackedMoves, evals: Sequence[int | None]) -> None:
        super().__init__(shelf, key, (moves, tuple(evals)), len(moves))

    @property
    def _record(self) -> tuple[PackedMoves, tuple[int | None, ...]]:
        return self.record  # type: ignore[no-any-return]

    @property
    def evals(self) -> tuple[int | None, ...]:
        """The value of each position (as :attr:`~livemon.live.analysis.LiveGame.evals`)."""
        return self._record[1]

    @overload
    def __getitem__(self, i: int) -> MoveEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[MoveEvent]: ...

    def __getitem__(self, i: int | slice) -> MoveEvent | list[MoveEvent]:
        return self._record[0][i]

    def __iter__(self) -> Iterator[MoveEvent]:
        return iter(self._record[0])


class GamePlies(Mapping[int, ScoredPly]):
    """One game's scored plies, read as ``{ply: ScoredPly}`` in ply order whatever their storage (see the
    module docstring): :meth:`add` one, :meth:`truncate` from a ply, :meth:`pack`, :meth:`shelve`.

    >>> d = Decision((0.3, 0.1), 1)
    >>> plies = GamePlies()
    >>> for k in (2, 1, 3, 4, 5):
    ...     plies.add(ScoredPly("g", k, 20, 30, d if k % 2 else None, "e2e4", "e4"))
    >>> head = plies.pack(3)  # a live game's settled plies through ply 3
    >>> list(plies), plies.packed_through, plies[2].ply, [p for p, _ in plies.side(1)], len(plies.decisions(1))
    ([1, 2, 3, 4, 5], 3, 2, [1, 3, 5], 3)
    >>> [sp.ply for sp in plies.truncate(2)], list(plies)  # withdrawn, newest first
    ([5, 4, 3, 2], [1])
    >>> _ = plies.pack(); shelf = Shelf(); _ = plies.shelve(shelf, "plies g")
    >>> plies.shelved, len(shelf), plies[1].san, plies.packed_through
    (True, 1, 'e4', 1)
    >>> plies.record.discard(); len(shelf)  # the game forgotten
    0
    """

    __slots__ = ("_plies",)

    def __init__(self) -> None:
        self._plies: dict[int, ScoredPly] | SplitPlies | PackedPlies | ShelvedPlies = {}

    def __len__(self) -> int:
        return len(self._plies)

    def __iter__(self) -> Iterator[int]:
        plies = self._plies
        return iter(sorted(plies)) if isinstance(plies, dict) else iter(plies)

    def __contains__(self, ply: object) -> bool:
        return ply in self._plies

    def __getitem__(self, ply: int) -> ScoredPly:
        return self._plies[ply]

    def items(self, plies: Iterable[int] | None = None) -> list[tuple[int, ScoredPly]]:  # type: ignore[override]
        """Every ``(ply, ScoredPly)`` in ply order, or only those of ``plies``."""
        kept = self._plies
        if isinstance(kept, dict):
            if plies is None:
                return sorted(kept.items())
            return [(p, kept[p]) for p in sorted(plies) if p in kept]
        return kept.items(plies)

    def values(self) -> list[ScoredPly]:  # type: ignore[override]
        """Every ply in ply order."""
        return [sp for _, sp in self.items()]

    def add(self, sp: ScoredPly) -> None:
        """Ply ``sp.ply`` scored (the caller withdrew any ply of that number first: :meth:`truncate`)."""
        self._changing(sp.ply)[sp.ply] = sp

    def truncate(self, from_ply: int) -> list[ScoredPly]:
        """Withdraw every ply from ``from_ply`` on (a packed or shelved part holding them is unpacked);
        returns them, newest first."""
        plies = self._changing(from_ply)
        return [plies.pop(p) for p in sorted((p for p in plies if p >= from_ply), reverse=True)]

    def _changing(self, from_ply: int) -> dict[int, ScoredPly]:
        """The plies from ``from_ply`` on as a dict that may change: the unpacked ones when they hold them all,
        else every ply (unpacked first)."""
        plies = self._plies
        if isinstance(plies, SplitPlies) and from_ply > plies.cut:
            return plies.tail
        if not isinstance(plies, dict):
            plies = self._plies = dict(plies.items())
        return plies

    def side(self, side: int) -> list[tuple[int, ScoredPly]]:
        """The plies of one side (``ply % 2``) in order; a packed game makes only those."""
        plies = self._plies
        if not isinstance(plies, dict):
            return plies.items(ply for ply in plies if ply % 2 == side)
        return sorted((ply, sp) for ply, sp in plies.items() if ply % 2 == side)

    def decisions(self, side: int) -> list[tuple[int, Decision]]:
        """``(ply, decision)`` of one side's plies that have a decision, in order (a packed game makes no
        :class:`ScoredPly` for them)."""
        plies = self._plies
        if not isinstance(plies, dict):
            return plies.decisions(side)
        return sorted((ply, sp.decision) for ply, sp in plies.items() if ply % 2 == side and sp.decision is not None)

    @property
    def packed_through(self) -> int:
        """The plies through this one are packed (0: none; a game packed whole: its number of plies, known
        without reading a shelved record)."""
        plies = self._plies
        if isinstance(plies, dict):
            return 0
        return plies.cut if isinstance(plies, SplitPlies) else len(plies)

    def pack(self, through: int | None = None) -> PackedPlies | ShelvedPlies | None:
        """Pack every ply (``through`` None: a finished, settled game) and return the packed record; or, for
        a live game, the plies through ``through`` (all scored: the caller knows), the newer ones kept as
        objects, returning the packed part, or None when no ply is packed anew."""
        plies = self._plies
        if through is None:
            if not isinstance(plies, (dict, SplitPlies)):
                return plies
            packed = plies.head.extended(plies.tail) if isinstance(plies, SplitPlies) else PackedPlies(plies)
            self._plies = packed
            return packed
        if not isinstance(plies, (dict, SplitPlies)) or through <= self.packed_through:
            return None
        tail = plies if isinstance(plies, dict) else plies.tail
        moving = {ply: sp for ply, sp in tail.items() if ply <= through}
        if not moving:
            return None
        head = plies.head.extended(moving) if isinstance(plies, SplitPlies) else PackedPlies(moving)
        self._plies = SplitPlies(head, through, {ply: sp for ply, sp in tail.items() if ply > through})
        return head

    @property
    def packed(self) -> bool:
        """Packed whole (perhaps shelved): what :meth:`shelve` moves."""
        return isinstance(self._plies, (PackedPlies, ShelvedPlies))

    @property
    def shelved(self) -> bool:
        return isinstance(self._plies, ShelvedPlies)

    def shelve(self, shelf: Shelf, key: str) -> ShelvedPlies | None:
        """Move the packed record onto ``shelf`` under ``key`` (only a game packed whole); returns the shelved
        record (None: not packed whole, nothing moved)."""
        plies = self._plies
        if not isinstance(plies, PackedPlies):
            return None
        self._plies = shelved = ShelvedPlies(shelf, key, plies)
        return shelved

    @property
    def record(self) -> PackedPlies | ShelvedPlies | None:
        """The record of a game packed whole (perhaps shelved), else None."""
        plies = self._plies
        return plies if isinstance(plies, (PackedPlies, ShelvedPlies)) else None


class GameMoves(Sequence[MoveEvent]):
    """One live game's moves, read as a list of :class:`~livemon.live.messages.MoveEvent` whatever their storage
    (see the module docstring): :meth:`append`, :meth:`truncate`, :meth:`pack`, :meth:`shelve`. The moves are
    kept without their FENs (only a game's first FEN is read) and with shared values (:func:`_kept`).

    >>> moves = GameMoves()
    >>> for k in range(1, 6):
    ...     moves.append(MoveEvent("g", k, "e2e4" if k % 2 else "e7e5", "x", "", clock=60.0 * k))
    >>> moves.pack(3); [m.ply for m in moves], moves[-1].ply, moves[1].clock, len(moves)
    ([1, 2, 3, 4, 5], 5, 120.0, 5)
    >>> moves.truncate(2); [m.ply for m in moves]
    [1, 2]
    >>> moves.pack(); shelf = Shelf(); moves.shelve(shelf, "moves g", [0, 10, 20])
    True
    >>> moves.shelved, moves.evals, moves[1].uci, len(moves)
    (True, (0, 10, 20), 'e7e5', 2)
    >>> _ = moves.unpack(); moves.shelved, [m.ply for m in moves]
    (False, [1, 2])
    """

    __slots__ = ("_game_id", "_moves")

    def __init__(self, game_id: str = "") -> None:
        self._game_id = game_id
        self._moves: list[MoveEvent] | LiveMoves | PackedMoves | ShelvedMoves = []

    def __len__(self) -> int:
        return len(self._moves)

    @overload
    def __getitem__(self, i: int) -> MoveEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[MoveEvent]: ...

    def __getitem__(self, i: int | slice) -> MoveEvent | list[MoveEvent]:
        return self._moves[i]

    def __iter__(self) -> Iterator[MoveEvent]:
        return iter(self._moves)

    def texts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The moves' SANs and UCIs (a board's move list), at the cost of their text, not of move objects.

        >>> moves = GameMoves()
        >>> for k, (u, san) in enumerate([("e2e4", "e4"), ("e7e5", "e5"), ("g1f3", "Nf3")], start=1):
        ...     moves.append(MoveEvent("g", k, u, san, ""))
        >>> moves.pack(2); moves.texts()
        (('e4', 'e5', 'Nf3'), ('e2e4', 'e7e5', 'g1f3'))
        """
        moves = self._moves
        if isinstance(moves, (LiveMoves, PackedMoves)):
            return moves.texts()
        if isinstance(moves, ShelvedMoves):
            return moves._record[0].texts()
        return tuple(m.san for m in moves), tuple(m.uci for m in moves)

    def append(self, ev: MoveEvent) -> None:
        """The next move, kept (:func:`_kept`); a packed whole game is unpacked first."""
        moves = self._moves
        if not isinstance(moves, (list, LiveMoves)):
            moves = self.unpack()
        moves.append(_kept(ev, self._game_id or ev.game_id))

    def truncate(self, keep: int) -> None:
        """Keep the first ``keep`` moves only (a correction)."""
        moves = self._moves
        if isinstance(moves, LiveMoves) and keep >= len(moves.head):
            del moves.tail[keep - len(moves.head):]
        elif isinstance(moves, list):
            del moves[keep:]
        else:
            self._moves = list(moves)[:keep]

    def unpack(self) -> list[MoveEvent]:
        """Back to a list of objects (a finished game corrected or going on)."""
        moves = self._moves
        if not isinstance(moves, list):
            moves = self._moves = list(moves)
        return moves

    def pack(self, through: int | None = None) -> None:
        """Pack every move (``through`` None: a finished, settled game), or those through ply ``through`` (a
        live game's settled ones, a chunk at a time)."""
        moves = self._moves
        game_id = self._game_id or (moves[0].game_id if len(moves) else "")
        if through is None:
            if isinstance(moves, (list, LiveMoves)) and len(moves):
                self._moves = moves.head.extended(moves.tail) if isinstance(moves, LiveMoves) else PackedMoves(
                    game_id, moves)
            return
        if not isinstance(moves, (list, LiveMoves)) or through > len(moves):
            return
        if isinstance(moves, list):
            self._moves = LiveMoves(PackedMoves(game_id, moves[:through]), moves[through:])
        elif through > len(moves.head):
            n = len(moves.head)
            self._moves = LiveMoves(moves.head.extended(moves.tail[:through - n]), moves.tail[through - n:])

    @property
    def packed_through(self) -> int:
        """The moves through this ply are packed (0: none)."""
        moves = self._moves
        if isinstance(moves, list):
            return 0
        return len(moves.head) if isinstance(moves, LiveMoves) else len(moves)

    @property
    def shelved(self) -> bool:
        return isinstance(self._moves, ShelvedMoves)

    @property
    def evals(self) -> tuple[int | None, ...]:
        """The evaluations put on the shelf with the moves (:meth:`shelve`; empty when not shelved)."""
        moves = self._moves
        return moves.evals if isinstance(moves, ShelvedMoves) else ()

    def shelve(self, shelf: Shelf, key: str, evals: Sequence[int | None]) -> bool:
        """Move the packed moves and the game's ``evals`` onto ``shelf`` under ``key`` (only a game packed
        whole); whether they moved."""
        moves = self._moves
        if not isinstance(moves, PackedMoves):
            return False
        self._moves = ShelvedMoves(shelf, key, moves, evals)
        return True

    def discard(self) -> None:
        """Take a shelved record off its shelf (the game is forgotten)."""
        if isinstance(self._moves, ShelvedMoves):
            self._moves.discard()
