"""``python -m livemon.faces.tui [--arbiter] [--replay SECONDS]``: the screen on the demo hub.

With ``--replay`` the live boards go on, one ply every SECONDS, published to
the hub by a task in the same event loop — the way ``livemon run`` drives the
app from the monitor.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from livemon.faces.tui.app import CommentaryApp
from livemon.faces.tui.demo import Demo, demo


async def replay(d: Demo, seconds: float) -> None:
    """Publish the demo's pending messages, one ply (board + estimate) per ``seconds``."""
    from livemon.live.messages import BoardState

    for msg in d.pending:
        if isinstance(msg, BoardState):
            await asyncio.sleep(seconds)
        d.hub.publish(msg)


async def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m livemon.faces.tui", description=__doc__.splitlines()[0])
    p.add_argument("--arbiter", action="store_true", help="show the fair-play alerts pane")
    p.add_argument("--replay", type=float, metavar="SECONDS", help="go on with the live boards")
    args = p.parse_args(argv)
    d = demo()
    task = asyncio.create_task(replay(d, args.replay)) if args.replay else None
    try:
        await CommentaryApp(d.hub, arbiter=args.arbiter).run_async()
    finally:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


if __name__ == "__main__":
    asyncio.run(main())
