from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
FIXTURES = DATA / "fixtures"
CORPUS = DATA / "corpus"

# Tests press Ctrl-C (SIGINT) on the bootlab processes they start.  A shell that runs the
# suite as a background job starts it with SIGINT ignored, and an ignored signal stays
# ignored in every child; a handled one is reset to the default in a child, which Python
# then turns into KeyboardInterrupt as at a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def fixture_path():
    return lambda name: str(FIXTURES / name)


@pytest.fixture
def corpus_path():
    return lambda name: str(CORPUS / name)


@pytest.fixture(scope="session")
def tree():
    """Debian's kernel source (linux-source-6.1), unpacked once into the cache."""
    from bootlab.targets import kernel_build

    if not kernel_build.SOURCE_TARBALL.exists():
        pytest.skip("linux-source-6.1 is not installed (make setup)")
    return kernel_build.source_tree()


def _kept_from_a_cpu(stall: str) -> bool:
    """Whether a recorded stall of the reader was the host's doing: most of it waiting for a
    CPU, or the hypervisor taking the host's (not the reader busy or blocked itself)."""
    m = re.fullmatch(r"stalled ([\d.]+) ms \(.*waited ([\d.]+) ms for a CPU.*?(?:host steal (\d+) ms .*)?\)", stall)
    return bool(m) and (float(m[2]) >= float(m[1]) / 2 or int(m[3] or 0) > 0)


@pytest.fixture
def kept_from_a_cpu():
    """The test of a recorded stall for the host's doing (where a console may lose bytes)."""
    return _kept_from_a_cpu
