from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
FIXTURES = DATA / "fixtures"
CORPUS = DATA / "corpus"


@pytest.fixture
def fixture_path():
    return lambda name: str(FIXTURES / name)


@pytest.fixture
def corpus_path():
    return lambda name: str(CORPUS / name)
