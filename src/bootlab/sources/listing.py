"""A log published as a numbered listing (`cat -n`, `nl -ba`): each line begins with its
number, right-aligned in six columns, and a tab.  Copies pasted into documents often have
the tab expanded to spaces (the line then begins in column 9), and a line too long for the
page wrapped onto an unnumbered line of its own:

        74  ethernet@30be0000 Waiting for PHY auto negotiation to
          complete......................................... TIMEOUT !
        75  Could not initialize PHY ethernet@30be0000

Such a file is read as the log it lists: the numbers taken off, each wrapped line joined
again to the line it belongs to, and every line kept at its number, so that what a report
cites (file:line) is the number the listing shows.
"""

from __future__ import annotations

import re

# The number in its six columns (wider past 999,999 lines), then the tab, its expansion to
# column 9, or nothing (an empty line listed, its trailing tab or spaces trimmed).
_NUMBERED = re.compile(rb"(?P<number> {0,5}\d+)(?:\t| {2}|$)")
_FIRST_LINES = 5  # numbered lines needed to take a file as a listing
_WRAPPED = 0.1  # at most this share of the listing's non-empty lines may be unnumbered


def _numbered(line: bytes) -> re.Match | None:
    m = _NUMBERED.match(line)
    return m if m and (len(m.group("number")) == 6 or m.group("number")[:1] != b" ") else None


def unnumber(data: bytes) -> bytes | None:
    """The log a numbered listing holds, each line at its number; None when the data is no
    listing (its first line unnumbered, too few numbered lines, too many that are not the
    next number)."""
    if _numbered(data[:64].split(b"\n", 1)[0]) is None:
        return None
    lines: list[bytes] = []
    first = previous = 0
    wrapped = 0
    for line in data.rstrip(b"\n").split(b"\n"):
        line = line.rstrip(b"\r")
        m = _numbered(line)
        if m is None or (lines and int(m.group("number")) != previous + 1):
            wrapped += 1
            if line.strip():
                lines[-1] += b" " + line.strip()
            continue
        previous = int(m.group("number"))
        first = first or previous
        lines.append(line[m.end():])
    listed = previous - first + 1
    if listed < _FIRST_LINES or wrapped > _WRAPPED * listed:
        return None
    return b"\n" * (first - 1) + b"\n".join(lines) + b"\n"
