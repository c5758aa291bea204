"""The npbench runner's pure parts (no npbench, no MPI): parsing, table, geometric means, docs."""

from __future__ import annotations

import json
import math

import numpy
import pytest

# The scaling suite lives in the checkout, not in the wheel: skipped where the tests run against the wheel alone.
npbench = pytest.importorskip("scaling.npbench")
validate = pytest.importorskip("scaling.npbench_kernel").validate


def rec(bench, ranks, status="pass", ratio=None, **kw):
    return {"bench": bench, "ranks": ranks, "status": status, "ratio": ratio, **kw}


RECORDS = [
    rec("a", 1, ratio=2.0),
    rec("a", 2, ratio=8.0),
    rec("a", 3),
    rec("b", 1, ratio=0.5),
    rec("b", 2, "wrong", ratio=3.0),
    rec("b", 3, "wrong"),
    rec("c", 1, "error", etype="TypeError", emsg="bad | thing"),
    rec("c", 2, "timeout", etype="timeout", emsg="no result after 240 s"),
    rec("c", 3, "error", etype="TypeError", emsg="bad"),
]


def test_geomean():
    assert npbench.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert npbench.geomean([3.0]) == pytest.approx(3.0)
    assert npbench.geomean([]) is None
    assert npbench.geomean([None, 0.0, 4.0]) == pytest.approx(4.0)  # missing and zero ignored
    vals = [0.3, 12.0, 7.5, 1.0]
    assert npbench.geomean(vals) == pytest.approx(math.prod(vals) ** (1 / len(vals)))


def test_table_rows_and_geomeans():
    text = npbench.table(RECORDS, [1, 2, 3], [1, 2])
    lines = text.strip().splitlines()
    assert lines[0] == "| kernel | correct (1, 2, 3 ranks) | ratio 1 rank | ratio 2 ranks |"
    assert lines[2] == "| a | yes, yes, yes | 2.00 | 8.00 |"
    assert lines[3] == "| b | yes, WRONG, WRONG | 0.50 | - |"  # a wrong run shows no ratio
    assert lines[4] == "| c | TypeError, timeout, TypeError | - | - |"
    # per column: a and b at 1 rank (geomean 1), only a at 2 ranks
    assert lines[5] == "| **geomean** (kernels timed at that rank count) | 2/3, 1/3, 1/3 | 1.00 (n=2) | 8.00 (n=1) |"
    # common set: kernels correct and timed at every timed rank count (only a)
    assert lines[6] == "| **geomean** (the 1 kernels timed at every rank count) |  | 2.00 | 8.00 |"


def test_section_lists_failures_and_escapes_pipes():
    text = npbench.section(RECORDS, [1, 2, 3], [1, 2], {"preset": "S", "date": "today", "machine": "m", "load": 1.0})
    assert "--preset S --ranks 1,2,3 --time-ranks 1,2" in text
    assert "- `c` at 1 rank(s): TypeError: bad / thing" in text
    assert "- `b` at 2 rank(s): wrong: relative error" in text
    assert "- `a`" not in text


def test_parse_output_prefers_rank_0_and_survives_interleaving():
    r0 = json.dumps({"rank": 0, "status": "error", "etype": "E0"})
    r1 = json.dumps({"rank": 1, "status": "error", "etype": "E1"})
    out = f"noise\nNPBENCH {r1}NPBENCH {r0}\nNPBENCH {{broken\n"
    assert npbench.parse_output(out)["etype"] == "E1"  # the line holds r1 first, r0 is lost
    assert npbench.parse_output(f"NPBENCH {r1}\nNPBENCH {r0}\n")["etype"] == "E0"
    assert npbench.parse_output("nothing here") is None


def test_merge_replaces_rerun_kernels_only():
    old = [rec("a", 1, ratio=1.0), rec("b", 1, ratio=2.0)]
    new = [rec("a", 1, ratio=5.0)]
    merged = npbench.merge(old, new)
    assert sorted((r["bench"], r["ratio"]) for r in merged) == [("a", 5.0), ("b", 2.0)]


def test_write_docs_replaces_between_markers(tmp_path):
    docs = tmp_path / "performance.md"
    docs.write_text("# Performance\n\nintro\n")
    npbench.write_docs("first\n", docs)
    npbench.write_docs("second\n", docs)
    text = docs.read_text()
    assert text.count(npbench.BEGIN) == 1 and text.count("## npbench") == 1
    assert "second\n" in text and "first" not in text and text.startswith("# Performance\n\nintro\n")


def test_validate_is_npbenchs_rule():
    ref = [numpy.array([1.0, 2.0, 3.0])]
    assert validate(ref, [ref[0] * (1 + 1e-7)], 1e-5, 1e-8, 1e-5)[0]
    ok, err = validate(ref, [ref[0] + [0, 0, 1e-3]], 1e-5, 1e-8, 1e-5)
    assert not ok and err == pytest.approx(1e-3 / numpy.linalg.norm(ref[0]))
    assert validate(ref, [ref[0] + [0, 0, 1e-3]], 1e-5, 1e-8, 1e-3)[0]  # within norm_error
    assert not validate(ref, [], 1e-5, 1e-8, 1e-5)[0]  # a missing output
    assert not validate(ref, [ref[0][:2]], 1e-5, 1e-8, 1e-5)[0]  # a shape mismatch


def test_kernels_needs_an_npbench_checkout(tmp_path):
    with pytest.raises(FileNotFoundError, match="npbench checkout"):
        npbench.kernels(tmp_path)
    (tmp_path / "bench_info").mkdir()
    for n in ("b", "a"):
        (tmp_path / "bench_info" / f"{n}.json").write_text("{}")
    assert npbench.kernels(tmp_path) == ["a", "b"]


def test_current_block_is_kept_by_the_report(tmp_path):
    docs = tmp_path / "performance.md"
    assert "Not measured" in npbench.current_block(docs)
    npbench.write_docs("the table\n", docs)
    block = npbench.current_block(docs)
    assert block == f"{npbench.BEGIN}\nthe table\n{npbench.END}"
