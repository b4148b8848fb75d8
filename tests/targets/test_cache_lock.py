"""Two processes that want one cache entry (pytest's workers, two users of one machine) make it
once: the second waits for the first and finds it made (packages.Locked).  mmdebstrap is a
stand-in here that counts its runs; the real one runs in the systemd device's tests."""

from __future__ import annotations

import threading
import time

from bootlab.targets import binfmt, rootfs


def test_one_debian_tree_is_built_once_for_two_callers(tmp_path, monkeypatch):
    monkeypatch.setenv("BOOTLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(binfmt, "ensure", lambda arch: None)
    runs = []

    def mmdebstrap(r, arch, out):
        runs.append(arch)
        time.sleep(0.3)  # long enough for the other caller to arrive while it builds
        out.write_bytes(b"tree")

    monkeypatch.setattr(rootfs, "_mmdebstrap", mmdebstrap)
    section = rootfs.RootfsSection()
    got = []
    callers = [threading.Thread(target=lambda: got.append(rootfs.debian_tree(section))) for _ in range(2)]
    for c in callers:
        c.start()
    for c in callers:
        c.join()
    assert runs == ["amd64"] and len(got) == 2 and got[0] == got[1] and got[0].read_bytes() == b"tree"
