"""The command line: version and choices checked before anything runs."""

from __future__ import annotations

import pytest

from mmcritic.cli import main


def test_cli_reports_its_version_and_refuses_unknown_dtypes(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("mmcritic 0.")
    with pytest.raises(SystemExit) as refused:
        main(["eval", "--model", "m", "--dtype", "bf16"])
    assert refused.value.code == 2
    assert "invalid choice: 'bf16'" in capsys.readouterr().err
