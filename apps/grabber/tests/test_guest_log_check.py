"""Tests of the guest-side grabber test's host checker.

The recorded log is a real guest console; the mutations show that the checker notices
what it is there to notice. The guest run end to end is in tests/test_guest.py.
"""

from pathlib import Path

import guest_log_check as check

HERE = Path(__file__).resolve().parent
RECORDED = (HERE / "data/guest-console.log").read_text(encoding="utf-8", errors="replace")


def failures(text):
    results = check.check_run(check.parse_log(text))
    return {name: problems for name, problems in results.items() if problems}


def test_recorded_guest_log_passes():
    assert failures(RECORDED) == {}


def test_recorded_log_has_every_case_with_its_frames():
    run = check.parse_log(RECORDED)
    assert run.settings["size"] == "640x360"
    assert run.cases["multi-device"].status == 0
    assert len(run.cases["multi-device"].frames) == 4 * int(run.settings["frames"])


def test_blank_frame_is_caught():
    bars = "bebebe,bcbe00,00bebd,00bd00,bc00bd,bc0000,0000bc,000000"
    mutated = RECORDED.replace(bars, ",".join(["101010"] * 8), 1)
    assert any("white bar is #101010" in p for p in failures(mutated)["mux-select"])


def test_short_frame_is_caught():
    mutated = RECORDED.replace("bytes=691215 ppm=640x360 maxval=255 header=15 complete=1",
                               "bytes=400000 ppm=640x360 maxval=255 header=15 complete=0", 1)
    assert any("400000 bytes" in p for p in failures(mutated)["mux-select"])


def test_temporary_file_left_is_caught():
    mutated = RECORDED.replace("@@ case disk-full end",
                               "FRAME name=.video0-000001.ppm.tmp bytes=4096 kind=raw "
                               "fnv1a=0\n@@ case disk-full end")
    assert any("temporary file" in p for p in failures(mutated)["disk-full"])


def test_success_on_bad_input_is_caught():
    mutated = RECORDED.replace("@@ case missing-device rc=1", "@@ case missing-device rc=0")
    assert failures(mutated)["missing-device"] == ["exit status 0, expected non-zero"]


def test_second_ready_line_is_caught():
    line = next(l for l in RECORDED.splitlines() if l.startswith("out: BOOTLAB READY"))
    mutated = RECORDED.replace(line, line + "\n" + line, 1)
    assert failures(mutated)["mux-select"] == ["2 ready lines on stdout, expected exactly 1"]


def test_unfinished_guest_run_is_caught():
    cut = RECORDED[:RECORDED.index("@@ case sigterm begin")]
    problems = failures(cut)
    assert problems["sigterm"] == ["case missing from the log"]
    assert "grabber-test" in problems


def test_log_without_the_test_is_caught():
    assert failures("Booting from ROM...\n") == {
        "grabber-test": ["no '@@ grabber-test begin' line: the guest test never ran"]}


def test_command_line_exit_status(tmp_path):
    good = tmp_path / "good.log"
    good.write_text(RECORDED)
    bad = tmp_path / "bad.log"
    bad.write_text(RECORDED.replace("@@ case raw rc=0", "@@ case raw rc=1"))
    assert check.main([str(good)]) == 0
    assert check.main([str(bad)]) == 1

# The guest run itself boots through bootlab's reference device: tests/test_guest.py.
