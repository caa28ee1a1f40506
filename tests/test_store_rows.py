"""The store's row codec: the text written field by field is ``json.dumps``'s, whatever the values."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, strategies as st

from livemon.io.store.rows import row_of, value_of
from livemon.live.messages import GameInfo, MoveEvent

texts = st.text(max_size=12)
maybe_float = st.none() | st.floats(allow_nan=True, allow_infinity=True)
maybe_int = st.none() | st.integers(-(2**70), 2**70)


def dumped(value: object) -> str:
    d = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}  # type: ignore[arg-type]
    d["kind"] = value.kind  # type: ignore[attr-defined]
    return json.dumps(d, separators=(",", ":"))


@given(texts, st.integers(1, 10**6), texts, texts, texts, maybe_float, maybe_float, maybe_int, texts, maybe_int,
       maybe_int)
def test_a_move_row_is_json_dumps_text(game_id, ply, uci, san, fen, clock, emt, eval_cp, feed, start, mate):
    m = MoveEvent(game_id, ply, uci, san, fen, clock, emt, eval_cp, feed, start, mate)
    assert row_of(m) == dumped(m)


def test_a_row_with_a_bool_or_a_non_finite_float_is_still_json_dumps_text():
    odd = [MoveEvent("é", 1, "e2e4", "e4", "x", clock=float("nan")), MoveEvent("g", 2, "e2e4", "e4", "x", emt=float("inf")),
           MoveEvent("g", True, "e2e4", "e4", "x")]  # type: ignore[arg-type]
    for m in odd:
        assert row_of(m) == dumped(m)
    assert value_of(MoveEvent, row_of(odd[0])).game_id == "é"


def test_a_game_row_round_trips():
    info = GameInfo("g1", white="Ånd, Å", black="B \"q\"", event="E\n1", white_elo=2400)
    assert row_of(info) == dumped(info) and value_of(GameInfo, row_of(info)) == info
