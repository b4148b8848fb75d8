"""How one clock's times map onto another's: a monotone piecewise-linear map.

A later clock that sees an earlier one's events (the host capture seeing printk lines)
sees each of them at or after the instant it happened: a line waits for the console's
backlog, never the other way round.  So the relation is an envelope under the (own time,
seen time) samples of lines that found the console idle: each such line seen at y_j bounds
every earlier event to y_j less the own time between them.  Following the envelope rather
than one offset keeps a clock that changes speed honest: under emulation the kernel's
printk clock runs slow until it marks its sched_clock stable (it loses about half a
second on the reference device), and a guest given another host's TSC rate runs fast or
slow throughout.

The clock's rate is measured on probes: lines printed while the console is idle, so seen
as they happen, spanning RATE_SPAN or more (the reference device prints four after
ready).  A rate off by more than RATE_TOLERANCE means the clock ran at the wrong speed
throughout (a TSC rate from another host): the map is then the line of that slope.
Outside the knots a clock runs at its own nominal speed (slope 1).

A clock that keeps no rate against the seeing one (a guest under QEMU's -icount counts
executed instructions: slow while it computes, jumping over its idle time with sleep=off)
admits only the bound every sighting gives: each time is mapped to the earliest sighting at
or after it (`arrival`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

RATE_SPAN = 1_000_000_000  # ns of the clock's own time a rate is measured over, at least
RATE_TOLERANCE = 0.005  # a clock further off than this ran at the wrong speed
# Probes whose pairwise slopes differ by more than this were not all seen as they happened
# (a busy host reads some late): their rate is not a measurement.
RATE_SPREAD = 0.02


@dataclass(frozen=True)
class ClockMap:
    """target = map(own); knots in increasing own time, targets non-decreasing."""

    xs: tuple[int, ...]
    ys: tuple[int, ...]

    @classmethod
    def offset(cls, d: int) -> "ClockMap":
        return cls((0,), (d,))

    @property
    def is_offset(self) -> bool:
        return len(self.xs) == 1

    def __call__(self, t: int) -> int:
        xs, ys = self.xs, self.ys
        if len(xs) == 1 or t <= xs[0]:
            return ys[0] + (t - xs[0])
        if t >= xs[-1]:
            return ys[-1] + (t - xs[-1])
        k = bisect.bisect_right(xs, t) - 1
        x0, x1, y0, y1 = xs[k], xs[k + 1], ys[k], ys[k + 1]
        return y0 + (y1 - y0) * (t - x0) // (x1 - x0)

    def many(self, t):
        """The map of a numpy array of times (int64)."""
        import numpy as np

        if len(self.xs) == 1:
            return t + (self.ys[0] - self.xs[0])
        xs = np.asarray(self.xs, dtype=np.int64)
        ys = np.asarray(self.ys, dtype=np.int64)
        inside = np.interp(t.astype(np.float64), xs, ys).astype(np.int64)
        return np.where(t < xs[0], ys[0] + (t - xs[0]), np.where(t > xs[-1], ys[-1] + (t - xs[-1]), inside))

    def inverse(self) -> "ClockMap":
        return ClockMap(self.ys, self.xs)

    def then(self, outer: "ClockMap") -> "ClockMap":
        """outer ∘ self: own time through this map, then through outer."""
        if outer.is_offset:
            d = outer.ys[0] - outer.xs[0]
            return ClockMap(self.xs, tuple(y + d for y in self.ys))
        if self.is_offset:
            d = self.ys[0] - self.xs[0]
            return ClockMap(tuple(x - d for x in outer.xs), outer.ys)
        inv = self.inverse()
        xs = sorted(set(self.xs) | {inv(x) for x in outer.xs})
        return ClockMap(tuple(xs), tuple(outer(self(x)) for x in xs))


def _earliest(samples: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Of one own time, only the earliest sighting matters; sorted by own time."""
    best: dict[int, int] = {}
    for x, y in samples:
        if x not in best or y < best[x]:
            best[x] = y
    return sorted(best.items())


def envelope(samples: list[tuple[int, int]]) -> ClockMap:
    """The map of the own clock onto the seeing one: through the samples seen earliest for
    their time, that is those no later sample undercuts (y - x at most that of every
    later one: a later line seen at y_j bounds every earlier event to y_j less the own
    time between them).  Linear between them; the own clock may run slow against the
    seeing one, never fast, between two such samples."""
    points = _earliest(samples)
    knots: list[tuple[int, int]] = []
    lowest = None
    for x, y in reversed(points):
        if lowest is None or y - x <= lowest:
            lowest = y - x
            knots.append((x, y))
    knots.reverse()
    return ClockMap(tuple(x for x, _ in knots), tuple(y for _, y in knots))


@dataclass(frozen=True)
class Rate:
    """Seen ns per own ns, fitted to `probes` samples over [start, end] of the own clock."""

    rate: float
    start: int
    end: int
    probes: int
    spread: float = 0.0  # the largest difference between two of the pairwise slopes

    @property
    def agrees(self) -> bool:
        return self.spread <= RATE_SPREAD


def rate_of(probes: list[tuple[int, int]]) -> Rate | None:
    """The slope of clock probes (lines printed with the console idle, so seen as they
    happen: the reference device prints `bootlab-clock N` after ready), when they span
    RATE_SPAN or more of the own clock: the median of the slopes between every two of them
    (Theil-Sen), so one probe the host saw late on a busy host does not tilt it; their spread
    says whether they agree (Rate.agrees)."""
    points = _earliest(probes)
    if len(points) < 2 or points[-1][0] - points[0][0] < RATE_SPAN:
        return None
    slopes = sorted((y2 - y1) / (x2 - x1) for k, (x1, y1) in enumerate(points) for x2, y2 in points[k + 1:])
    middle = len(slopes) // 2
    slope = slopes[middle] if len(slopes) % 2 else (slopes[middle - 1] + slopes[middle]) / 2
    return Rate(slope, points[0][0], points[-1][0], len(points), slopes[-1] - slopes[0])


def arrival(samples: list[tuple[int, int]]) -> ClockMap:
    """A clock whose speed against the seeing one is unknown and changes: every event
    happened no later than the earliest sighting of it or of anything after it, and that
    bound is all there is (an upper bound; linear between sightings)."""
    points = _earliest(samples)
    knots: list[tuple[int, int]] = []
    for x, y in reversed(points):
        if knots and y >= knots[-1][1]:
            y = knots[-1][1]  # seen after a later line: bounded by that line's sighting
        knots.append((x, y))
    knots.reverse()
    return ClockMap(tuple(x for x, _ in knots), tuple(y for _, y in knots))


def lower(a: ClockMap, b: ClockMap) -> ClockMap:
    """The lesser of two maps at every knot of either: an estimate held under a bound."""
    import numpy as np

    xs = np.union1d(np.asarray(a.xs, dtype=np.int64), np.asarray(b.xs, dtype=np.int64))
    return ClockMap(tuple(xs.tolist()), tuple(np.minimum(a.many(xs), b.many(xs)).tolist()))


def steady(samples: list[tuple[int, int]], rate: float) -> ClockMap:
    """A clock known to run at `rate` throughout: the line of that slope under every sample."""
    points = _earliest(samples)
    offset = min(y - rate * x for x, y in points)
    last = points[-1][0]
    return ClockMap((0, last), (round(offset), round(offset + rate * last)))
