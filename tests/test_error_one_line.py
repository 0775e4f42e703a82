"""A library error quoting a file name with a line break: the one stderr line split in two
('tracelens: mi' then 'ss.sqlite: no such file'), as escape_controls keeps line breaks
(found by advfp)."""

from __future__ import annotations

import pytest

from tracelens.cli import main


@pytest.mark.parametrize("args", [["census"], ["util", "--format", "json"]])
def test_an_error_quoting_a_line_break_stays_one_line(tmp_path, capsys, args):
    missing = tmp_path / "mi\nss.sqlite"
    with pytest.raises(SystemExit) as exit_info:
        main([args[0], str(missing), *args[1:]])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err == f"tracelens: {tmp_path}/mi\\x0ass.sqlite: no such file\n"
