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
