"""A game's scored plies and its moves: one column log each, one storage behind one interface — sans I/O.

:class:`ColumnLog` keeps a game's rows by ply, in two parts: the newest rows as objects (they may
still be corrected, and a game's plies are scored in any order) and the settled ones as columns
(one flat array or string per field: ~90 bytes a scored ply instead of ~500 as objects, ~30 a
move instead of ~110). Rows move into the columns a chunk at a time as a live game settles
(:meth:`~ColumnLog.seal` ``through`` a ply), all of them when it settles whole; the columns of a
settled game may then go to an archive (:meth:`~ColumnLog.archive`: a
:class:`~livemon.live.shelf.Shelf`, in the live monitor a private temporary database) and are read
back from it when something rare needs them. Whoever reads a log reads rows, never a storage: a
correction at or before the sealed rows opens them again (:meth:`~ColumnLog.unseal`), and every
figure is what a log that never sealed gives.

One log class, two row types: :class:`PlyLog` (a game's :class:`ScoredPly`, the estimator's record
the screener reads too, a ``{ply: ScoredPly}``) and :class:`MoveLog` (a live game's
:class:`~livemon.live.messages.MoveEvent`, a list of moves, kept without their FENs). Adding a
field to a ply touches :class:`ScoredPly` and :class:`_PlyColumns` here, nothing else.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar, overload

from livemon.live.memo import Memo
from livemon.live.messages import MoveEvent
from livemon.live.shelf import Shelf
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
"""``before`` of a ply that was not scorable, in :class:`_PlyColumns`."""


class _PlyColumns:
    """Scored plies (in ply order) as columns: the sealed part of a :class:`PlyLog`.

    >>> d = Decision((0.3, 0.1, -0.2), 1)
    >>> rows = [ScoredPly("g", 1, 20, 30, d, "e2e4", "e4", False, 7), ScoredPly("g", 2, None, 30, None, "e7e5", "e5")]
    >>> cols = _PlyColumns(rows[:1]).extended(rows[1:])
    >>> cols.rows(range(2)) == rows, cols.index(2), cols.index(3), cols.decisions_at([1, 2, 5]) == [(1, d), (2, None)]
    (True, 1, -1, True)
    """

    __slots__ = ("_after", "_before", "_forced", "_game_id", "_index", "_offsets", "_played", "_plies", "_san",
                 "_uci", "_values", "_zobrist")

    def __init__(self, items: Sequence[ScoredPly]) -> None:
        self._game_id = items[0].game_id if items else ""
        plies: list[int] = []
        before: list[int] = []
        after: list[int] = []
        played: list[int] = []
        values: list[float] = []
        offsets = [0]
        zobrist: list[int | None] = []
        for sp in items:  # one pass over the rows, each column a list until it is packed
            plies.append(sp.ply)
            before.append(_NO_CP if sp.before is None else sp.before)
            after.append(sp.after)
            decision = sp.decision
            if decision is None:
                played.append(-1)
            else:
                played.append(decision.played)
                values.extend(decision.values)
            offsets.append(len(values))
            zobrist.append(sp.zobrist)
        self._plies, self._before, self._after = array("i", plies), array("i", before), array("i", after)
        self._played = array("b", played)
        self._offsets, self._values = array("I", offsets), array("d", values)  # from lists: no spare room
        self._uci = " ".join([sp.uci for sp in items])
        self._san = " ".join([sp.san for sp in items])
        self._forced = bytes([sp.forced for sp in items])
        self._zobrist = None if zobrist.count(None) == len(zobrist) else (
            array("Q", [z or 0 for z in zobrist]), bytes([z is not None for z in zobrist]))
        self._index_plies()

    def _index_plies(self) -> None:
        n = len(self._plies)
        self._index: dict[int, int] | None = None if list(self._plies) == list(range(1, n + 1)) else {
            ply: i for i, ply in enumerate(self._plies)}

    def extended(self, more: Sequence[ScoredPly]) -> _PlyColumns:
        """These rows and ``more`` (each after them), these not made again."""
        new = _PlyColumns(more)
        if not new._plies or not self._plies:
            return self if not new._plies else new
        out = object.__new__(_PlyColumns)
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

    def plies(self) -> Iterator[int]:
        return iter(self._plies)

    def index(self, ply: int) -> int:
        """The row of ``ply`` (-1: none)."""
        if self._index is not None:
            return self._index.get(ply, -1)
        return ply - 1 if 1 <= ply <= len(self._plies) else -1

    def rows(self, at: Iterable[int]) -> list[ScoredPly]:
        """The rows at these indices (the move strings split once)."""
        ucis, sans = self._uci.split(" "), self._san.split(" ")
        return [self._row(i, ucis, sans) for i in at]

    def _row(self, i: int, ucis: list[str], sans: list[str]) -> ScoredPly:
        before, played = self._before[i], self._played[i]
        decision = None if played < 0 else Decision.checked(tuple(self._values[self._offsets[i]:self._offsets[i + 1]]), played)
        return ScoredPly(self._game_id, self._plies[i], None if before == _NO_CP else before, self._after[i],
                         decision, ucis[i], sans[i], bool(self._forced[i]),
                         None if self._zobrist is None or not self._zobrist[1][i] else self._zobrist[0][i])

    def decisions_at(self, plies: Iterable[int]) -> list[tuple[int, Decision | None]]:
        """``(ply, decision)`` of each of ``plies`` held, in their order, without making their rows."""
        read = self.decision_reader()
        return [(ply, read(i)) for ply in plies if (i := self.index(ply)) >= 0]

    def decision_reader(self) -> Callable[[int], Decision | None]:
        """The decision of a row, by its index, read from the columns as lists (a list's slice makes a
        decision's tuple in half the time an array's does): for reading many rows at once."""
        played, offsets, values = self._played.tolist(), self._offsets.tolist(), self._values.tolist()
        checked = Decision.checked

        def read(i: int) -> Decision | None:
            p = played[i]
            return None if p < 0 else checked(tuple(values[offsets[i]:offsets[i + 1]]), p)

        return read

    def decisions(self, side: int) -> list[tuple[int, Decision]]:
        """``(ply, decision)`` of one side's plies (``ply % 2``) that have a decision, in order."""
        read = self.decision_reader()
        return [(ply, d) for i, ply in enumerate(self._plies) if ply % 2 == side and (d := read(i)) is not None]


_NO_EVAL = -(2**31)


class _MoveColumns:
    """A game's first moves (plies 1..n) as columns, without their FENs: the sealed part of a :class:`MoveLog`.

    >>> moves = [MoveEvent("g", 1, "e2e4", "e4", "", clock=5400.0), MoveEvent("g", 2, "e7e5", "e5", "", eval_cp=-20, feed="b")]
    >>> cols = _MoveColumns("g", moves[:1]).extended(moves[1:])
    >>> cols.rows(range(2)) == moves, len(cols), cols.texts()
    (True, 2, (('e4', 'e5'), ('e2e4', 'e7e5')))
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

    def extended(self, moves: Sequence[MoveEvent]) -> _MoveColumns:
        """These moves and ``moves`` (the next ones), these not made again."""
        new = _MoveColumns(self._game_id, moves)
        if not len(new) or not len(self):
            return self if not len(new) else new
        out = object.__new__(_MoveColumns)
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

    def plies(self) -> Iterator[int]:
        return iter(range(1, len(self) + 1))

    def index(self, ply: int) -> int:
        return ply - 1 if 1 <= ply <= len(self) else -1

    def texts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The moves' SANs and UCIs, read from the packed text without making a move object."""
        if not len(self):
            return (), ()
        return tuple(self._san.split(" ")), tuple(self._uci.split(" "))

    def rows(self, at: Iterable[int]) -> list[MoveEvent]:
        ucis, sans = self._uci.split(" "), self._san.split(" ")
        return [self._move(k, ucis, sans) for k in at]

    def _move(self, k: int, ucis: list[str], sans: list[str]) -> MoveEvent:
        clock, emt, cp = self._clock[k], self._emt[k], self._eval[k]
        return MoveEvent(self._game_id, k + 1, ucis[k], sans[k], "", None if math.isnan(clock) else clock,
                         None if math.isnan(emt) else emt, None if cp == _NO_EVAL else cp,
                         self._feeds if isinstance(self._feeds, str) else self._feeds[k])


R = TypeVar("R", ScoredPly, MoveEvent)
C = TypeVar("C", _PlyColumns, _MoveColumns)


class ColumnLog(Generic[R, C]):
    """One game's rows by ply: the newest open (objects), the settled ones sealed into columns, which may be
    archived; see the module docstring. :class:`PlyLog` and :class:`MoveLog` say how rows become columns
    and how they are read (a mapping by ply, a list)."""

    __slots__ = ("_columns", "_cut", "_key", "_open", "_sealed", "_shelf")

    def __init__(self) -> None:
        self._open: dict[int, R] = {}  # the open rows by ply
        self._columns: C | None = None  # the sealed rows, in memory (None: none, or archived)
        self._cut = 0  # the rows through this ply are sealed
        self._sealed = 0  # how many (known without reading the archive)
        self._shelf: Shelf | None = None  # the archive holding the columns, under _key
        self._key = ""

    def _packed(self, rows: list[R], onto: C | None) -> C:
        """``rows`` (in ply order, after those of ``onto``) as columns: the subclass's."""
        raise NotImplementedError

    def _cols(self) -> C | None:
        """The sealed rows' columns, read from the archive when there."""
        if self._shelf is not None:
            return self._shelf.get(self._key)[0]  # type: ignore[no-any-return]
        return self._columns

    def __len__(self) -> int:
        return self._sealed + len(self._open)

    @property
    def sealed_through(self) -> int:
        """The rows through this ply are sealed (0: none)."""
        return self._cut

    @property
    def sealed(self) -> bool:
        """Sealed whole (perhaps archived): what :meth:`archive` moves."""
        return self._sealed > 0 and not self._open

    @property
    def archived(self) -> bool:
        return self._shelf is not None

    def seal(self, through: int | None = None) -> bool:
        """Seal the open rows through ply ``through`` (the caller knows every row through it is in), or every
        row (None: the game settles); whether any row was sealed."""
        rows = self._open
        if through is not None and through <= self._cut:
            return False
        moving = sorted((r for p, r in rows.items() if through is None or p <= through), key=lambda r: r.ply)
        if not moving:
            return False
        self._restore()
        self._columns = columns = self._packed(moving, self._columns)
        self._sealed = len(columns)
        self._cut = moving[-1].ply if through is None else through
        self._open = {p: r for p, r in rows.items() if p > self._cut}  # a fresh dict: one keeps the table it grew to
        return True

    def archive(self, shelf: Shelf, key: str, extra: Any = None) -> bool:
        """Move the columns of a log sealed whole onto ``shelf`` under ``key`` with ``extra`` (read back by
        :meth:`_extra`); whether they moved."""
        if self._shelf is not None or self._open or self._columns is None:
            return False
        shelf.put(key, (self._columns, extra))
        self._shelf, self._key, self._columns = shelf, key, None
        return True

    def _extra(self) -> Any:
        return None if self._shelf is None else self._shelf.get(self._key)[1]

    def _restore(self) -> None:
        """The archived columns back in memory (the log is written to), off the archive."""
        shelf = self._shelf
        if shelf is not None:
            self._columns = shelf.get(self._key)[0]
            shelf.discard(self._key)
            self._shelf = None

    def unseal(self) -> None:
        """Every row open again (a correction at or before the sealed rows)."""
        cols = self._cols()
        if cols is None:
            return
        self._restore()
        rows: list[R] = cols.rows(range(len(cols)))  # type: ignore[assignment]
        self._open = {**{r.ply: r for r in rows}, **self._open}
        self._columns, self._cut, self._sealed = None, 0, 0

    def _add(self, row: R) -> None:
        if row.ply <= self._cut:
            self.unseal()
        elif self._shelf is not None:
            self._restore()
        self._open[row.ply] = row

    def _truncate(self, from_ply: int) -> list[R]:
        """Withdraw every row from ``from_ply`` on; returns them, newest first."""
        if from_ply <= self._cut:
            self.unseal()
        rows = self._open
        return [rows.pop(p) for p in sorted((p for p in rows if p >= from_ply), reverse=True)]

    def discard(self) -> None:
        """Take the columns off the archive (the game is forgotten)."""
        if self._shelf is not None:
            self._shelf.discard(self._key)
            self._shelf, self._columns, self._cut, self._sealed = None, None, 0, 0


class PlyLog(ColumnLog[ScoredPly, _PlyColumns], Mapping[int, ScoredPly]):
    """One game's scored plies, read as ``{ply: ScoredPly}`` in ply order (see the module docstring):
    :meth:`add` one, :meth:`truncate` from a ply, :meth:`seal`, :meth:`archive`.

    >>> d = Decision((0.3, 0.1), 1)
    >>> plies = PlyLog()
    >>> for k in (2, 1, 3, 4, 5):
    ...     plies.add(ScoredPly("g", k, 20, 30, d if k % 2 else None, "e2e4", "e4"))
    >>> plies.seal(3)  # a live game's settled plies through ply 3
    True
    >>> list(plies), plies.sealed_through, plies[2].ply, [p for p, _ in plies.side(1)], len(plies.decisions(1))
    ([1, 2, 3, 4, 5], 3, 2, [1, 3, 5], 3)
    >>> [ply for ply, _ in plies.items([5, 1, 4])], plies.decisions_at([5, 2]) == [(5, d), (2, None)]
    ([1, 4, 5], True)
    >>> [sp.ply for sp in plies.truncate(2)], list(plies)  # withdrawn, newest first
    ([5, 4, 3, 2], [1])
    >>> shelf = Shelf(); plies.seal(); plies.archive(shelf, "plies g")
    True
    True
    >>> plies.archived, len(shelf), plies[1].san, 1 in plies, 2 in plies, len(plies)
    (True, 1, 'e4', True, False, 1)
    >>> plies.discard(); len(shelf)  # the game forgotten
    0
    """

    __slots__ = ()

    def _packed(self, rows: list[ScoredPly], onto: _PlyColumns | None) -> _PlyColumns:
        return _PlyColumns(rows) if onto is None else onto.extended(rows)

    def __iter__(self) -> Iterator[int]:
        cols = self._cols() if self._sealed else None
        if cols is not None:
            yield from cols.plies()
        yield from sorted(self._open)

    def __contains__(self, ply: object) -> bool:
        if ply in self._open:
            return True
        if type(ply) is not int or ply > self._cut or not self._sealed:
            return False
        cols = self._cols()
        return cols is not None and cols.index(ply) >= 0

    def __getitem__(self, ply: int) -> ScoredPly:
        sp = self._open.get(ply)
        if sp is not None:
            return sp
        cols = self._cols() if ply <= self._cut else None
        i = -1 if cols is None else cols.index(ply)
        if cols is None or i < 0:
            raise KeyError(ply)
        return cols.rows((i,))[0]

    def items(self, plies: Iterable[int] | None = None) -> list[tuple[int, ScoredPly]]:  # type: ignore[override]
        """Every ``(ply, ScoredPly)`` in ply order, or only those of ``plies`` held."""
        rows = self._open
        cols = self._cols() if self._sealed else None
        if plies is None:
            head = [] if cols is None else [(sp.ply, sp) for sp in cols.rows(range(len(cols)))]
            return head + sorted(rows.items())
        wanted = sorted(plies)
        tail = [(p, rows[p]) for p in wanted if p in rows]
        if cols is None:
            return tail
        at = [cols.index(p) for p in wanted if p <= self._cut and p not in rows]
        head = [(sp.ply, sp) for sp in cols.rows(i for i in at if i >= 0)]
        return sorted(head + tail) if head and tail and tail[0][0] < head[-1][0] else head + tail

    def values(self) -> list[ScoredPly]:  # type: ignore[override]
        """Every ply in ply order."""
        return [sp for _, sp in self.items()]

    def add(self, sp: ScoredPly) -> None:
        """Ply ``sp.ply`` scored (the caller withdrew any ply of that number first: :meth:`truncate`)."""
        self._add(sp)

    def truncate(self, from_ply: int) -> list[ScoredPly]:
        """Withdraw every ply from ``from_ply`` on (sealed ones are opened first); returns them, newest first."""
        return self._truncate(from_ply)

    def side(self, side: int) -> list[tuple[int, ScoredPly]]:
        """The plies of one side (``ply % 2``) in order; sealed ones made for that side only."""
        return self.items(ply for ply in self if ply % 2 == side)

    def decisions(self, side: int) -> list[tuple[int, Decision]]:
        """``(ply, decision)`` of one side's plies that have a decision, in order (sealed ones read without
        making their :class:`ScoredPly`: a player's posterior and performance re-read only these)."""
        cols = self._cols() if self._sealed else None
        head = [] if cols is None else cols.decisions(side)
        return head + sorted((ply, sp.decision) for ply, sp in self._open.items()
                             if ply % 2 == side and sp.decision is not None)

    def decisions_at(self, plies: Iterable[int]) -> list[tuple[int, Decision | None]]:
        """``(ply, decision)`` of each of ``plies`` held, in their order (the screener's recount reads only these)."""
        rows = self._open
        cols = self._cols() if self._sealed else None
        if cols is None:
            return [(ply, sp.decision) for ply in plies if (sp := rows.get(ply)) is not None]
        read, index = cols.decision_reader(), cols.index
        out: list[tuple[int, Decision | None]] = []
        for ply in plies:
            sp = rows.get(ply)
            if sp is not None:
                out.append((ply, sp.decision))
            elif (i := index(ply)) >= 0:
                out.append((ply, read(i)))
        return out


class MoveLog(ColumnLog[MoveEvent, _MoveColumns], Sequence[MoveEvent]):
    """One live game's moves (plies 1..n), read as a list of :class:`~livemon.live.messages.MoveEvent` (see the
    module docstring): :meth:`append`, :meth:`truncate`, :meth:`seal`, :meth:`archive` (with the game's
    evaluations). The moves are kept without their FENs (only a game's first FEN is read) and with shared
    values (:func:`_kept`).

    >>> moves = MoveLog("g")
    >>> for k in range(1, 6):
    ...     moves.append(MoveEvent("g", k, "e2e4" if k % 2 else "e7e5", "x", "", clock=60.0 * k))
    >>> moves.seal(3); [m.ply for m in moves], moves[-1].ply, moves[1].clock, len(moves), [m.ply for m in moves[2:4]]
    True
    ([1, 2, 3, 4, 5], 5, 120.0, 5, [3, 4])
    >>> [moves[i].ply for i in (0, 2, 3, 4, -1, -2, -3, -5)], [m.ply for m in moves[::2]]
    ([1, 3, 4, 5, 5, 4, 3, 1], [1, 3, 5])
    >>> moves[5]  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    IndexError: 5
    >>> moves.truncate(2); [m.ply for m in moves]
    [1, 2]
    >>> shelf = Shelf(); moves.seal(); moves.archive(shelf, "moves g", [0, 10, 20])
    True
    True
    >>> moves.archived, moves.evals, moves[1].uci, len(moves), moves.texts()
    (True, (0, 10, 20), 'e7e5', 2, (('x', 'x'), ('e2e4', 'e7e5')))
    >>> moves.unseal(); moves.archived, [m.ply for m in moves], len(shelf)
    (False, [1, 2], 0)
    """

    __slots__ = ("_game_id",)

    def __init__(self, game_id: str = "") -> None:
        super().__init__()
        self._game_id = game_id

    def _packed(self, rows: list[MoveEvent], onto: _MoveColumns | None) -> _MoveColumns:
        return _MoveColumns(self._game_id or rows[0].game_id, rows) if onto is None else onto.extended(rows)

    @overload
    def __getitem__(self, i: int) -> MoveEvent: ...

    @overload
    def __getitem__(self, i: slice) -> list[MoveEvent]: ...

    def __getitem__(self, i: int | slice) -> MoveEvent | list[MoveEvent]:
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            at = range(start, stop, step)
            cut = self._cut
            sealed = [k for k in at if k < cut]
            cols = self._cols() if sealed else None
            head = [] if cols is None else cols.rows(sealed)
            rows = self._open
            return head + [rows[k + 1] for k in at if k >= cut]
        if i < 0:
            i += n
        ev = self._open.get(i + 1)  # the live path reads the newest moves: a dict's cost
        if ev is not None:
            return ev
        cols = self._cols() if 0 <= i < self._cut else None
        if cols is None:
            raise IndexError(i)
        return cols.rows((i,))[0]

    def __iter__(self) -> Iterator[MoveEvent]:
        cols = self._cols() if self._sealed else None
        if cols is not None:
            yield from cols.rows(range(len(cols)))
        yield from self._open.values()  # in ply order: appended so, cut from the end

    def texts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The moves' SANs and UCIs (a board's move list), at the cost of their text, not of move objects.

        >>> moves = MoveLog()
        >>> for k, (u, san) in enumerate([("e2e4", "e4"), ("e7e5", "e5"), ("g1f3", "Nf3")], start=1):
        ...     moves.append(MoveEvent("g", k, u, san, ""))
        >>> moves.seal(2); moves.texts()
        True
        (('e4', 'e5', 'Nf3'), ('e2e4', 'e7e5', 'g1f3'))
        """
        cols = self._cols() if self._sealed else None
        sans, ucis = ((), ()) if cols is None else cols.texts()
        rows = self._open.values()
        return sans + tuple(m.san for m in rows), ucis + tuple(m.uci for m in rows)

    def append(self, ev: MoveEvent) -> None:
        """The next move, kept (:func:`_kept`)."""
        self._add(_kept(ev, self._game_id or ev.game_id))

    def truncate(self, keep: int) -> None:
        """Keep the first ``keep`` moves only (a correction)."""
        self._truncate(keep + 1)

    @property
    def evals(self) -> tuple[int | None, ...]:
        """The evaluations archived with the moves (:meth:`archive`; empty when not archived)."""
        extra = self._extra()
        return () if extra is None else extra

    def archive(self, shelf: Shelf, key: str, extra: Sequence[int | None] = ()) -> bool:
        """Move the sealed moves and the game's evaluations ``extra`` onto ``shelf`` under ``key``."""
        return super().archive(shelf, key, tuple(extra))


def _kept(ev: MoveEvent, game_id: str) -> MoveEvent:
    """``ev`` as a live game keeps it: without its FEN (~120 bytes a ply; only a game's first FEN is read,
    :attr:`~livemon.live.analysis.LiveGame.start_fen`, and a compacted game's moves have none either: :class:`MoveLog`), and
    with one object for each of its values that repeat: the game's own id, one str per move text (UCI,
    SAN), one int per evaluation, one float per clock reading. A feed makes them anew for every move
    (the game id per poll): ~160 bytes a live ply kept until the game settles.

    >>> ev = MoveEvent("g", 1, "e2e4", "e4", "a FEN", clock=5400.0)
    >>> _kept(ev, "g")  # doctest: +NORMALIZE_WHITESPACE
    MoveEvent(game_id='g', ply=1, uci='e2e4', san='e4', fen_before='', clock=5400.0, emt=None, eval_cp=None,
              feed='', start_eval_cp=None, eval_mate=None)
    >>> again = MoveEvent("".join("g"), 1, "".join(["e2", "e4"]), "".join("e4"), "", clock=float("5400"))
    >>> kept = _kept(again, "g")
    >>> kept.uci is _kept(ev, "g").uci, kept.clock is _kept(ev, "g").clock, kept.game_id is _kept(ev, "g").game_id
    (True, True, True)
    """
    # made with its slots' own setters (a frozen dataclass's __init__ sets each field by object.__setattr__,
    # which looks the field up on the class each time: twice the time for a move's eleven)
    kept = _new(MoveEvent)
    game_id_, ply, uci, san, fen, clock, emt, eval_cp, feed, start, mate = _MOVE_SLOTS
    game_id_(kept, game_id)
    ply(kept, ev.ply)
    uci(kept, sys.intern(ev.uci))
    san(kept, sys.intern(ev.san))
    fen(kept, "")
    clock(kept, _seconds(ev.clock))
    emt(kept, _seconds(ev.emt))
    eval_cp(kept, _shared(ev.eval_cp))
    feed(kept, ev.feed)
    start(kept, None)
    mate(kept, ev.eval_mate)
    return kept


_new = object.__new__
_MOVE_SLOTS = tuple(getattr(MoveEvent, f.name).__set__ for f in fields(MoveEvent))
"""The setters of a :class:`~livemon.live.messages.MoveEvent`'s slots, in field order (:func:`_kept`)."""


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
