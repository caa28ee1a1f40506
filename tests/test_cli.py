import pytest

from livemon.cli import COMMANDS, main


@pytest.mark.parametrize("argv", [["--help"]] + [[name, "--help"] for name in COMMANDS])
def test_every_help_page_renders(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: livemon")
    if argv == ["--help"]:
        assert all(name in out for name in COMMANDS)


HEAVY = ("numpy", "scipy", "numba", "textual", "websockets", "aiomqtt", "httpx")


@pytest.mark.parametrize("argv", [["--help"], ["status"], ["doctor"], ["export"]]
                         + [[name, "--help"] for name in COMMANDS])
def test_start_up_imports_nothing_heavy(argv, tmp_path):
    """Heavy libraries load where they are used (bench/startup.py times it)."""
    import subprocess
    import sys

    from livemon.io.store import Store

    Store(tmp_path / "s.sqlite").close()
    extra = ["--store", str(tmp_path / "s.sqlite")] if argv[-1] != "--help" else []
    code = ("import sys\nfrom livemon.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            f"print('HEAVY', sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *argv, *extra], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in done.stderr, done.stderr


def test_help_pages_show_no_restructuredtext_markup(capsys):
    for argv in [["--help"]] + [[name, "--help"] for name in COMMANDS]:
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        for markup in ("``", ":class:", ":func:", ":meth:", ":mod:", ":data:", ".. "):
            assert markup not in out, (argv, markup)


def test_fit_time_units_match_the_model():
    from livemon.commands.fit import TIME_UNITS
    from livemon.rating.ttt import TIME_UNITS as MODEL

    assert TIME_UNITS == MODEL
