"""The run store: every boot bootlab runs, in SQLite (./bootlab.db unless --db).

A run keeps its target description, command line, raw capture, parsed timeline (the
analysis JSON), metrics, and the host and tool versions.  Each run is written in one
transaction (WAL mode), so a concurrent reader never sees half a run.  The schema is
versioned (PRAGMA user_version); opening an older database migrates it in place, step by
step, and a newer one is refused rather than misread.
"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from functools import lru_cache

from .. import __version__

DEFAULT_DB = "bootlab.db"
UUID_PREFIX = 8  # the first group of a uuid

# Each step takes the schema from version i to i+1.
MIGRATIONS = [
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uuid TEXT NOT NULL UNIQUE,
        created REAL NOT NULL,
        label TEXT,
        campaign TEXT,
        variant TEXT,
        status TEXT NOT NULL,
        reason TEXT,
        target TEXT NOT NULL,
        command TEXT NOT NULL,
        capture BLOB,
        analysis TEXT,
        host TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        wall_ns INTEGER,
        ready_ns INTEGER
    );
    CREATE TABLE metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE INDEX runs_campaign ON runs(campaign, variant);
    CREATE INDEX runs_label ON runs(label);
    """,
    """
    ALTER TABLE runs ADD COLUMN sequence INTEGER;
    CREATE INDEX runs_sequence ON runs(campaign, sequence);
    """,
    # The host's time of arrival of the ready line, not the boot's ready time (the metric
    # at:ready, the device's instant): named for what it is.
    """
    ALTER TABLE runs RENAME COLUMN ready_ns TO ready_line_ns;
    """,
    # A boot stopped with Ctrl-C was stored as failed; it is a status of its own.
    """
    UPDATE runs SET status = 'interrupted' WHERE status = 'failed' AND reason = 'interrupted';
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(Exception):
    pass


@dataclass
class Run:
    id: int
    uuid: str
    created: float
    label: str | None
    campaign: str | None
    variant: str | None
    status: str
    reason: str | None
    target: dict
    command: list[str]
    host: dict
    tool_version: str
    wall_ns: int | None
    ready_line_ns: int | None  # when the ready line reached the host, after the console's backlog
    sequence: int | None = None
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def ready_ns(self) -> int | None:
        """The boot's ready time: when the device was ready, from power-on (the analysis's
        end; statistics use it)."""
        at = self.metrics.get("at:ready")
        return None if at is None else int(at)


@lru_cache(maxsize=1)
def host_info() -> dict:
    def version(argv: list[str]) -> str:
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            return "not found"
        return out.splitlines()[0].strip() if out else "?"

    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "qemu": version(["qemu-system-x86_64", "--version"]),
        "busybox": version(["/bin/busybox"]).split(" multi-call")[0] if os.path.exists("/bin/busybox") else "not found",
    }


class Store:
    def __init__(self, path: str = DEFAULT_DB, create: bool = True):
        """The store at `path`; made there if missing when `create` (a verb that only reads
        runs must not leave an empty store behind)."""
        self.path = path
        if not create and not os.path.exists(path):
            raise StoreError(f"{path}: no run store here (`bootlab boot` and `bootlab lab run` make one); name the "
                             "store with --db PATH")
        try:
            self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{path}: not a bootlab run store ({err})") from None

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: schema version {version} is newer than this bootlab "
                             f"({SCHEMA_VERSION}); upgrade bootlab")
        for step in range(version, SCHEMA_VERSION):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[step].split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {step + 1}")
                self.db.execute("COMMIT")
            except sqlite3.DatabaseError:
                self.db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self.db.close()

    # -- writing --------------------------------------------------------------------------

    def add(self, *, status: str, reason: str, target: dict, command: list[str], capture: bytes | None,
            analysis: dict | None, metrics: dict[str, float], wall_ns: int | None, ready_line_ns: int | None,
            label: str | None = None, campaign: str | None = None, variant: str | None = None,
            sequence: int | None = None, run_uuid: str | None = None) -> int:
        """Store one run atomically; returns its id."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cur = self.db.execute(
                "INSERT INTO runs (uuid, created, label, campaign, variant, status, reason, target, command, capture,"
                " analysis, host, tool_version, wall_ns, ready_line_ns, sequence) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (run_uuid or str(uuid.uuid4()), time.time(), label, campaign, variant, status, reason, json.dumps(target),
                 json.dumps(command), capture, json.dumps(analysis) if analysis is not None else None,
                 json.dumps(host_info()), f"bootlab {__version__}", wall_ns, ready_line_ns, sequence))
            run_id = cur.lastrowid
            self.db.executemany("INSERT INTO metrics (run_id, name, value) VALUES (?,?,?)",
                                [(run_id, k, float(v)) for k, v in metrics.items()])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return run_id

    # -- reading --------------------------------------------------------------------------

    _COLUMNS = ("id, uuid, created, label, campaign, variant, status, reason, target, command, host, tool_version,"
                " wall_ns, ready_line_ns, sequence")

    def _run(self, row) -> Run:
        run = Run(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], json.loads(row[8]),
                  json.loads(row[9]), json.loads(row[10]), row[11], row[12], row[13], row[14])
        run.metrics = dict(self.db.execute("SELECT name, value FROM metrics WHERE run_id = ?", (run.id,)))
        return run

    def runs(self, campaign: str | None = None, label: str | None = None, status: str | None = None,
             limit: int | None = None) -> list[Run]:
        where, args = [], []
        for column, value in (("campaign", campaign), ("label", label), ("status", status)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = f"SELECT {self._COLUMNS} FROM runs"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id"
        if limit:
            sql = f"SELECT * FROM ({sql.replace(' ORDER BY id', ' ORDER BY id DESC')} LIMIT {int(limit)}) ORDER BY id"
        return [self._run(row) for row in self.db.execute(sql, args)]

    def get(self, ref: str | int) -> Run:
        """A run by id, or by uuid (or a unique uuid prefix of UUID_PREFIX characters or more:
        a shorter one would make a missing id such as 7 the run whose uuid starts with 7)."""
        text = str(ref)
        row = None
        if text.isascii() and text.isdigit():
            row = self.db.execute(f"SELECT {self._COLUMNS} FROM runs WHERE id = ?", (int(text),)).fetchone()
        if row is None and len(text) >= UUID_PREFIX:  # a uuid prefix can be all digits too
            rows = self.db.execute(f"SELECT {self._COLUMNS} FROM runs WHERE uuid LIKE ?", (text + "%",)).fetchall()
            if len(rows) > 1:
                raise StoreError(f"run {text!r} is ambiguous ({len(rows)} runs)")
            row = rows[0] if rows else None
        if row is None:
            raise StoreError(f"no run {text!r} in {self.path}")
        return self._run(row)

    def capture(self, run_id: int) -> bytes | None:
        row = self.db.execute("SELECT capture FROM runs WHERE id = ?", (run_id,)).fetchone()
        return row[0] if row else None

    def analysis(self, run_id: int) -> dict | None:
        row = self.db.execute("SELECT analysis FROM runs WHERE id = ?", (run_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def count(self, campaign: str) -> int:
        """How many runs a campaign has stored (boots made, whatever became of them)."""
        return self.db.execute("SELECT COUNT(*) FROM runs WHERE campaign = ?", (campaign,)).fetchone()[0]

    def walls(self, campaign_prefix: str) -> list[int]:
        """Wall times (ns, boot and its set-up) of the runs of campaigns named prefix..."""
        return [w for (w,) in self.db.execute(
            "SELECT wall_ns FROM runs WHERE substr(campaign, 1, length(?1)) = ?1 AND wall_ns IS NOT NULL",
            (campaign_prefix,))]

    def campaigns(self) -> list[tuple[str, int]]:
        return list(self.db.execute(
            "SELECT campaign, COUNT(*) FROM runs WHERE campaign IS NOT NULL GROUP BY campaign ORDER BY MIN(id)"))
