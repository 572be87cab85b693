"""The resident memory a cell samples once a block (its memory limit, its peak)."""

import os

import psutil
import pytest

from dolb.evaluation.resident import resident_bytes


def test_resident_bytes_are_those_psutil_reads():
    held = bytearray(64 << 20)  # noqa: F841 - held while measured
    assert abs(resident_bytes() - psutil.Process().memory_info().rss) < 1 << 20


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_reads_its_own_memory():
    resident_bytes()  # opened by the parent
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child grows by 128 MiB: its reading must show it, not the parent's
        grown = bytearray(128 << 20)  # noqa: F841
        os.write(write, str(resident_bytes() - psutil.Process().memory_info().rss).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    assert abs(int(os.read(read, 64))) < 1 << 20
