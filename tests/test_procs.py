"""Worker processes (livemon.io.procs): forked from one warm server, deaf to the group's signals."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

# A fresh interpreter whose first multiprocessing act is a worker started by livemon.io.procs: the resource
# tracker and the server are both started then, by the starting thread (the order that once unblocked them).
CHILD = textwrap.dedent("""
    import asyncio, json, sys
    from livemon.io import procs

    def loaded(conn):
        conn.send(sorted(m for m in ("numba", "numpy", "livemon.rating.ttt") if m in sys.modules))

    def masks(pid):
        fields = dict(line.split(":\\t", 1) for line in open(f"/proc/{pid}/status").read().splitlines())
        return int(fields["SigBlk"], 16), int(fields["PPid"])

    async def main():
        ctx = procs.context()
        reader, writer = ctx.Pipe(duplex=False)  # no queue: its lock would start the tracker here, first
        proc = await procs.start(lambda: (p := ctx.Process(target=loaded, args=(writer,)), p.start())[0])
        blocked, parent = masks(proc.pid)
        server_blocked, _ = masks(parent)
        seen = await asyncio.to_thread(reader.recv)
        proc.join(30)
        print(json.dumps({"method": ctx.get_start_method(), "worker": blocked, "server": server_blocked,
                          "loaded": seen, "exit": proc.exitcode}))

    if __name__ == "__main__":
        asyncio.run(main())
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_comes_from_a_warm_server_with_ctrl_c_and_sigterm_blocked(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    both = (1 << (2 - 1)) | (1 << (15 - 1))  # SIGINT, SIGTERM
    assert got["method"] == "forkserver" and got["exit"] == 0
    assert got["worker"] & both == both and got["server"] & both == both
    assert got["loaded"] == ["livemon.rating.ttt", "numba", "numpy"]  # imported by the server, before the fork
