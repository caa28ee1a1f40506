"""A bounded memo: one object per value met, for values a long event meets again and again.

The live path keeps many equal small values for the whole event (a clock reading, an evaluation,
a candidate's value in pawns) and recomputes a few texts per move (a FEN's ranks, its castling
field). A :class:`Memo` gives each value or text one object, and starts afresh when it holds
``limit`` entries, so that it never grows with the event (a clear only costs rebuilding).

>>> clocks = Memo[float, float](limit=2)
>>> a, b = clocks.one(float("60")), clocks.one(float("60"))
>>> a is b, clocks.put(1.0, 1.0), clocks.one(2.0), sorted(clocks)
(True, 1.0, 2.0, [2.0])
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Memo(dict[K, V]):
    """A dict of at most ``limit`` entries: :meth:`put` clears it when full (``get`` stays dict's own)."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: K, value: V) -> V:
        """Remember ``value`` for ``key`` (after a clear if the memo is full) and return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value

    def one(self: Memo[K, K], value: K) -> K:
        """The one object kept for values equal to ``value`` (``value`` itself the first time)."""
        kept = self.get(value)
        return self.put(value, value) if kept is None else kept
