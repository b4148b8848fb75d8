"""The HTML reports in a real browser (Debian's chromium, headless, driven by selenium
through chromium-driver), as a user opens them: no console error, every section there and
not empty, the timeline's zoom and axis, the real-time Gantt chart, the comparison.

Real data only: the reference device's captures in tests/data/real and the Table III trace
recorded in the guest (tests/rt/data).  Each test leaves screenshots in its tmp_path.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bootlab.analysis import analyze
from bootlab.lab.boots import metrics_of
from bootlab.lab.store import Store
from bootlab.sources import read
from bootlab.timeline import Kind

pytestmark = pytest.mark.browser

REAL = Path(__file__).parent / "data" / "real"
RT = Path(__file__).parent / "rt" / "data"
MS = 1_000_000
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--no-first-run", "--window-size=1500,1100")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless chromium for the module, with a fresh profile and its console log kept."""
    from selenium import webdriver   # the test extra (make setup)
    from selenium.webdriver.chrome.service import Service

    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        pytest.fail("chromium and chromium-driver are needed (scripts/setup installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    chrome = webdriver.Chrome(options=options, service=Service(driver))
    yield chrome
    chrome.quit()


def open_page(browser, path: Path, shot: Path) -> list[dict]:
    """Opens a page; returns the console's errors; leaves a screenshot."""
    browser.get(path.as_uri())
    browser.get_screenshot_as_file(str(shot))
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def sections(browser) -> dict[str, str]:
    """Each section's heading and its text without the heading."""
    return browser.execute_script("""
        var out = {};
        document.querySelectorAll('section').forEach(function (s) {
          var h = s.querySelector('h2'), text = s.innerText;
          out[h ? h.innerText : ''] = h ? text.slice(h.innerText.length).trim() : text.trim();
        });
        return out;""")


def bootlab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bootlab", *args], cwd=cwd, capture_output=True, text=True)


def wheel(browser, element, clicks: int, delta: int = -100) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    for _ in range(clicks):
        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(element), 0, delta).perform()


def chart_spans(browser, selector: str) -> list[dict]:
    """Every span of a time chart: its times, drawn box, label and whether it is shown."""
    return browser.execute_script("""
        return Array.prototype.map.call(document.querySelectorAll(arguments[0] + ' rect.sp'), function (r) {
          var b = r.getBoundingClientRect(), t = r.parentNode.querySelector('title');
          return {s: +r.dataset.s, e: +r.dataset.e, left: b.left, right: b.right, width: b.width,
                  shown: r.style.display !== 'none', title: t ? t.textContent : ''};
        });""", selector)


def span_element(browser, selector: str, start: int):
    """The span of a time chart that starts at `start` (ns from its origin)."""
    return browser.execute_script("""
        var start = arguments[1];
        return Array.prototype.find.call(document.querySelectorAll(arguments[0] + ' rect.sp'),
                                         function (r) { return +r.dataset.s === start; });""", selector, start)


def plot_area(browser, selector: str) -> tuple[float, float]:
    """(left, right) of a time chart's plot on the page (its clip rectangle is not drawn)."""
    return tuple(browser.execute_script("""
        var svg = document.querySelector(arguments[0]), left = svg.getBoundingClientRect().left + +svg.dataset.plotX;
        return [left, left + svg.querySelector('rect.clip').width.baseVal.value];""", selector))


@pytest.fixture(scope="module")
def boot_report(tmp_path_factory):
    """`bootlab analyze -f html` of a real boot of the reference device (console capture and
    the kernel log with initcall_debug), run where the files are, as a user would."""
    where = tmp_path_factory.mktemp("analyze")
    for name in ("generic-initcall.capture.gz", "generic-initcall.dmesg.gz"):
        shutil.copy(REAL / name, where / name)
    done = bootlab("analyze", "-f", "html", "-o", "report.html", "generic-initcall.capture.gz",
                   "generic-initcall.dmesg.gz", cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "report.html"


def test_boot_report_opens_clean_with_every_section(browser, boot_report, tmp_path):
    assert open_page(browser, boot_report, tmp_path / "report.png") == []
    found = sections(browser)
    for title in ("Phases", "Timeline", "Slowest initcalls", "Slowest driver probes", "Console output cost",
                  "Clocks"):
        assert found.get(title), (title, list(found))
    advice = next(t for t in found if t.startswith("Advice ("))
    assert "Add `quiet` to the kernel command line" in found[advice]
    assert all(text for text in found.values()), [t for t, text in found.items() if not text]
    # Files are named as the command was given them, not by absolute paths.
    assert "generic-initcall.capture.gz:390" in found["Phases"] and str(boot_report.parent) not in found["Phases"]


def test_timeline_draws_every_span_and_zooms_for_real(browser, boot_report, tmp_path):
    from selenium.webdriver.common.by import By

    open_page(browser, boot_report, tmp_path / "whole.png")
    a = analyze(read([str(REAL / "generic-initcall.capture.gz"), str(REAL / "generic-initcall.dmesg.gz")]))
    initcalls = [e for e in a.boot.events if e.kind == Kind.INITCALL and e.dur is not None and a.boot.at(e) is not None]
    spans = chart_spans(browser, "svg.bootgraph")
    drawn = [s for s in spans if "[initcall]" in s["title"]]
    assert len(drawn) == len(initcalls) and sum(s["e"] - s["s"] < 4 * MS for s in drawn) > 80
    assert [s for s in spans if s["shown"] and s["width"] < 0.999] == [], "a span narrower than a pixel"
    one_ms = min((s for s in drawn if 900_000 <= s["e"] - s["s"] <= 1_100_000), key=lambda s: s["s"])
    assert one_ms["width"] < 10
    # Wheel over that initcall: the axis scales around the pointer, the initcall stays under it.
    target = span_element(browser, "svg.bootgraph", one_ms["s"])
    wheel(browser, target, 25)
    browser.get_screenshot_as_file(str(tmp_path / "zoomed.png"))
    left, right = plot_area(browser, "svg.bootgraph")
    box = target.rect
    assert box["width"] >= 10 and left <= box["x"] and box["x"] + box["width"] <= right
    # Every label shown lies inside the plot.
    outside = browser.execute_script("""
        var left = arguments[0], right = arguments[1];
        return Array.prototype.filter.call(document.querySelectorAll('svg.bootgraph text.in'), function (t) {
          var b = t.getBoundingClientRect();
          return t.style.display !== 'none' && b.width > 0 && (b.left < left - 1 || b.right > right + 1);
        }).length;""", left, right)
    assert outside == 0
    # The axis that cuts out the emulated decompression gives it 2% of the rest.
    from selenium.webdriver.support.ui import Select

    axis = Select(browser.find_element(By.CSS_SELECTOR, ".chartcontrols select"))
    axis.select_by_value("cut")
    browser.get_screenshot_as_file(str(tmp_path / "cut.png"))
    phases = {s["title"].split(":")[0]: s["width"] for s in chart_spans(browser, "svg.bootgraph")
              if "[" not in s["title"]}
    assert phases["kernel load/decompress"] < 0.05 * sum(phases.values()) < phases["kernel init"]
    axis.select_by_value("kernel")
    browser.get_screenshot_as_file(str(tmp_path / "kernel.png"))
    first_tick = browser.execute_script("return document.querySelector('svg.bootgraph g.axis text').textContent")
    assert float(first_tick.rstrip("s")) >= 3.1   # the kernel's first message at 3.174 s


def test_gantt_page_with_an_injected_violation(browser, tmp_path):
    """One second of Table III recorded in the guest, with control's job 1 completing 12.7 ms
    after its release (its bound is 10 ms), and the capture of a boot run without -icount."""
    trace = tmp_path / "injected.trace"
    trace.write_text(injected_table3())
    capture = tmp_path / "boot.capture"
    capture.write_bytes(gzip.decompress((REAL / "generic.capture.gz").read_bytes()))
    page = tmp_path / "gantt.html"
    done = bootlab("rt", "trace", str(trace), "--config", str(RT / "guest_table3.toml"), "--html", str(page),
                   "--capture", str(capture), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "VIOLATION: control: worst response 12.719 ms is above its analytical bound of 10.000 ms" in done.stdout
    assert open_page(browser, page, tmp_path / "gantt.png") == []
    found = browser.execute_script("""
        return {summary: document.querySelector('section p').innerText,
                violations: Array.prototype.map.call(document.querySelectorAll('.bootlab-rt-violations li'),
                                                     function (li) { return li.innerText; }),
                flagged: Array.prototype.map.call(document.querySelectorAll('tr.violation td:first-child'),
                                                  function (td) { return td.innerText; }),
                colour: getComputedStyle(document.querySelector('tr.violation td')).color,
                headers: Array.prototype.map.call(document.querySelectorAll('.bootlab-rt-tasks th'),
                                                  function (th) { return th.innerText; }),
                legend: document.querySelector('svg.gantt g.legend').textContent};""")
    assert "1 violation of the analysis" in found["summary"]
    assert found["flagged"] == ["control"] and found["colour"] == "rgb(169, 68, 66)"
    assert "without -icount" in found["violations"][-1]
    assert "worst response (ms)" in found["headers"] and "bound (ms)" in found["headers"]
    assert "control" in found["legend"] and "deadline missed" in found["legend"]
    # The page opens on a window of the second; a 2 ms job is then readable after zooming.
    job = next(s for s in chart_spans(browser, "svg.gantt") if s["title"].startswith("control job 2:"))
    target = span_element(browser, "svg.gantt", job["s"])
    wheel(browser, target, 8)
    browser.get_screenshot_as_file(str(tmp_path / "gantt-zoomed.png"))
    assert target.rect["width"] >= 40


def injected_table3() -> str:
    """The recorded trace with one completion moved later, events kept in time order."""
    lines = (RT / "guest_table3.trace").read_text().splitlines()
    moved = ["4049615066 complete task=1 job=1" if line.endswith(" complete task=1 job=1") else line for line in lines]
    head = [line for line in moved if line.startswith("#")]
    body = sorted((line for line in moved if not line.startswith("#")), key=lambda line: int(line.split()[0]))
    return "\n".join(head + body) + "\n"


def test_compare_page_draws_phases_and_each_boot(browser, tmp_path):
    """The generic kernel against the cloud kernel, two real boots each."""
    store = Store(str(tmp_path / "lab.db"))
    for label, names in (("generic", ("generic", "generic-initcall")), ("cloud", ("cloud", "cloud-initcall"))):
        for name in names:
            a = analyze(read([str(REAL / f"{name}.capture.gz")]))
            store.add(status="ok", reason="ready", target={}, command=["real capture"], capture=None, analysis=None,
                      metrics=metrics_of(a), wall_ns=a.phases.total, ready_line_ns=a.phases.total, label=label)
    page = tmp_path / "compare.html"
    done = bootlab("compare", "generic", "cloud", "--db", str(tmp_path / "lab.db"), "-f", "html", "-o", str(page),
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert open_page(browser, page, tmp_path / "compare.png") == []
    found = browser.execute_script("""
        return {bars: Array.prototype.map.call(document.querySelectorAll('.setbars .phasebar'),
                                               function (b) { return b.children.length; }),
                runs: Array.prototype.map.call(document.querySelectorAll('svg.dots circle.run title'),
                                               function (t) { return t.textContent; }),
                table: document.querySelector('section table').innerText};""")
    assert len(found["bars"]) == 2 and min(found["bars"]) >= 4
    assert any(t.startswith("generic, run 1: ") for t in found["runs"])
    assert any(t.startswith("cloud, run 4: ") for t in found["runs"])
    assert "total (power-on to ready)" in found["table"] and all(text for text in sections(browser).values())
