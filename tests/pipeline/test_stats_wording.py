"""`benchpress warehouse stats` says what its percentage counts (issue "Everyday use, round
3"): the share of a source's rows placed in the matrix, beside why the others were not, so
`19.2%` next to `0` unresolved names no longer reads as an identity failure."""

from __future__ import annotations

from predictor.cli import main
from warehouse.stats import warehouse_stats


def test_the_placed_share_is_labelled_and_the_rows_kept_out_are_counted(
    refreshed_home, capsys
) -> None:
    stats = warehouse_stats(refreshed_home.home / "warehouse.duckdb")
    swebench = stats["sources"]["swebench"]
    kept_out = swebench["excluded_rows"] + swebench["rejected_rows"]
    assert swebench["unresolved_rows"] == 0 and kept_out > 0  # the case the issue shows

    assert main(["warehouse", "stats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = lines[0].split()
    assert head[6:8] == ["rows", "placed"] and "resolved" not in head
    row = next(line.split() for line in lines if line.startswith("swebench "))
    assert row[6] == f"{100 * swebench['resolution_rate']:.1f}%"
    assert (
        "rows placed = the share of a source's rows that became matrix cells; the others were "
        "excluded (humans, agent systems, ensembles), rejected, or unresolved (their distinct "
        "names are the unresolved columns)"
    ) in lines
    parts = [
        f"{swebench['excluded_rows']:,} excluded (humans, agent systems, ensembles)"
        if swebench["excluded_rows"]
        else "",
        f"{swebench['rejected_rows']:,} rejected" if swebench["rejected_rows"] else "",
    ]
    expected = f"swebench: {kept_out:,} rows not placed: {', '.join(p for p in parts if p)}"
    assert expected in lines
