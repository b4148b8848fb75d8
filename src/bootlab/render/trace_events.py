"""A writer for the Trace Event JSON format, which Perfetto (ui.perfetto.dev) and
chrome://tracing load directly.

Shared by the boot timeline's Perfetto output and the real-time scheduler's trace export:
each adds named tracks (one per thread row) and slices, instants and counters on them.
Times are given in nanoseconds and written in the format's microseconds.
"""

from __future__ import annotations

import json


class TraceEvents:
    def __init__(self) -> None:
        self._events: list[dict] = []
        self._tracks: dict[tuple[str, str], tuple[int, int]] = {}
        self._pids: dict[str, int] = {}

    def track(self, process: str, thread: str) -> tuple[int, int]:
        """(pid, tid) of a named row, created on first use, grouped under `process`."""
        key = (process, thread)
        if key in self._tracks:
            return self._tracks[key]
        pid = self._pids.get(process)
        if pid is None:
            pid = self._pids[process] = len(self._pids) + 1
            self._events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": process}})
            self._events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        tid = sum(1 for p, _ in self._tracks if p == process) + 1
        self._tracks[key] = (pid, tid)
        self._events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": thread}})
        self._events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})
        return pid, tid

    def slice(self, process: str, thread: str, name: str, start_ns: int, dur_ns: int,
              args: dict | None = None, category: str = "") -> None:
        pid, tid = self.track(process, thread)
        event = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": start_ns / 1000, "dur": max(dur_ns, 0) / 1000}
        if category:
            event["cat"] = category
        if args:
            event["args"] = args
        self._events.append(event)

    def instant(self, process: str, thread: str, name: str, t_ns: int, args: dict | None = None) -> None:
        pid, tid = self.track(process, thread)
        event = {"ph": "i", "s": "t", "name": name, "pid": pid, "tid": tid, "ts": t_ns / 1000}
        if args:
            event["args"] = args
        self._events.append(event)

    def counter(self, process: str, name: str, t_ns: int, values: dict[str, float]) -> None:
        pid, _ = self.track(process, process)
        self._events.append({"ph": "C", "name": name, "pid": pid, "ts": t_ns / 1000, "args": values})

    def to_json(self, metadata: dict | None = None) -> str:
        doc = {"traceEvents": self._events, "displayTimeUnit": "ms"}
        if metadata:
            doc["metadata"] = metadata
        return json.dumps(doc, separators=(",", ":"))
