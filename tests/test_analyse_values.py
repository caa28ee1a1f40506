"""``analyse --json`` is made of the values the faces receive: each player's entry is the ``players`` channel's
last message of that player (its ``player:<name>`` copy, with the histogram) through the one web codec."""

from __future__ import annotations

import json

from livemon.app.batch import read_files
from livemon.cli import main
from livemon.faces.hub import Hub
from livemon.faces.web import codec
from livemon.live.core import LiveCore
from livemon.live.effects import Publish
from livemon.live.messages import PlayerEstimate
from livemon.live.values import COMMENTS_PROFILE
from tests.conftest import real

PGN = "broadcast_2025_BBDDNRR_eval_clk_lunahernandez.pgn"  # an [%eval] on every move: no engine needed


def published(hub: Hub, effects: list) -> None:
    for effect in effects:
        if isinstance(effect, Publish):
            hub.publish(effect.message)


def test_analyse_players_are_the_players_channels_messages(capsys, tmp_path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[engine]\npath = "/nonexistent/stockfish"\n[store]\npath = "{tmp_path / "s.sqlite"}"\n')
    assert main(["analyse", "--json", str(real(PGN)), "--config", str(config)]) == 0
    out = json.loads(capsys.readouterr().out)

    # the same games replayed live: a core publishing on a hub, as the monitor's does (no engine: the comments)
    hub = Hub()
    core = LiveCore.for_analysis(profile=COMMENTS_PROFILE, coalesce=True)
    core.configure(COMMENTS_PROFILE)
    for game in read_files([str(real(PGN))], lambda _: None):
        for msg in game.messages:
            published(hub, core.handle(msg))
        published(hub, core.flush())
    published(hub, core.tick())  # the monitor's timer: Algorithm 3's engine strength, Algorithm 2
    published(hub, core.work())  # the work it leaves: the estimates it moved

    channel = {m.name: m for m in hub.snapshot("players")[1] if isinstance(m, PlayerEstimate)}
    assert len(channel) == len(out["players"]) == 10
    for entry in out["players"]:
        (whole,) = hub.snapshot(f"player:{entry['name']}")[1]  # the detail channel's copy: with the histogram
        assert whole == channel[entry["name"]]
        wire = codec.to_dict(whole)
        assert json.loads(json.dumps({k: v for k, v in wire.items() if k not in ("kind", "v", "ts")})) == \
            {k: v for k, v in entry.items() if k not in ("history", "c_positions")}, entry["name"]
        assert entry["history"][-1] == wire["rating_diff_vs_engine"] and len(entry["history"]) == entry["moves"]
    assert any(e["perceived_elo"] is not None for e in out["players"])  # the timer's figures are there too
    assert all(e["moves"] > 0 and sum(e["gain_histogram"].values()) == e["moves"] for e in out["players"])
