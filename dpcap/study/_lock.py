"""The lock of a sweep's store: who holds it, and whether that holder is provably dead.

A lock names its holder by process id, process start time, host name, boot id and pid
namespace (:func:`identity`); :class:`Holder` reads one without following a link and never
beyond :data:`LOCK_BYTES` (:mod:`dpcap.study._store` has the whole protocol).
"""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

__all__ = [
    "LOCK_BYTES",
    "Foreign",
    "Holder",
    "alive",
    "file_kind",
    "identity",
    "parse",
    "start_time",
]

#: A lock is never read beyond this many bytes.
LOCK_BYTES = 4096


def first_line(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.readline(1024).strip() or None
    except OSError:
        return None


def proc_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first), if readable."""
    text = first_line(f"/proc/{pid}/stat")
    return None if text is None or ")" not in text else text.rsplit(")", 1)[1].split()


def start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, Linux), None where unknown."""
    fields = proc_stat(pid)
    try:
        return int(fields[19]) if fields else None
    except (IndexError, ValueError):
        return None


def identity() -> dict[str, Any]:
    """What tells this process's pid space apart: host name, boot id and pid namespace."""
    try:
        pidns: str | None = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = None
    return {
        "host": socket.gethostname(),
        "boot": first_line("/proc/sys/kernel/random/boot_id"),
        "pidns": pidns,
    }


def alive(pid: int) -> bool:
    """Whether a process ``pid`` of this pid space runs (a zombie does not)."""
    if os.name == "nt":  # os.kill would end it: never judged dead here
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    fields = proc_stat(pid)
    return not (fields and fields[0] == "Z")


class Foreign(Exception):
    """``_lock`` is not a regular file of sensible size (the message says what it is)."""


def file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "symbolic link"),
        (stat.S_ISFIFO, "named pipe (FIFO)"),
        (stat.S_ISDIR, "directory"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


class Holder:
    """A lock file as read: its text, file identity and the holder it names (if it does)."""

    def __init__(self, text: str, ident: tuple[int, int]):
        self.text, self.ident = text, ident
        self.info = parse(text)

    @classmethod
    def read(cls, lock: Path) -> Holder | None:
        """The lock at ``lock``, None if there is none; never blocks, never reads much.

        Raises :class:`Foreign` for a symbolic link, a FIFO, a device, a directory, or a
        file larger than :data:`LOCK_BYTES`.
        """
        try:
            mode = os.lstat(lock).st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISREG(mode):
            raise Foreign(f"a {file_kind(mode)}")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(lock, flags)
        except FileNotFoundError:
            return None
        except OSError as exc:  # replaced by a link meanwhile (ELOOP), unreadable
            raise Foreign(f"unreadable ({exc})") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise Foreign(f"a {file_kind(info.st_mode)}")
            data = os.read(fd, LOCK_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > LOCK_BYTES:
            raise Foreign(f"a file of more than {LOCK_BYTES} bytes")
        return cls(data.decode("utf-8", "replace"), (info.st_dev, info.st_ino))

    def describe(self) -> str:
        if self.info is None:
            return "no holder (an empty or unreadable lock)"
        where = f" on host {self.info['host']!r}" if "host" in self.info else ""
        since = f", since {self.info['since']}" if "since" in self.info else ""
        return f"process {self.info['pid']}{where}{since}"

    def state(self) -> str:
        """``"dead"`` (provably), ``"alive"``, or ``"unknown"`` (another pid space, no holder)."""
        if self.info is None:
            return "unknown"
        pid = self.info["pid"]
        if "host" in self.info:  # written by this version: the pid space must be ours
            me = identity()
            if any(self.info.get(key) != me[key] for key in me):
                return "unknown"
        if not alive(pid):
            return "dead"
        start, now = self.info.get("start"), start_time(pid)
        if start is not None and now is not None and start != now:
            return "dead"  # the id was reused by a later process
        return "alive"

    def elsewhere(self) -> str:
        """Which of host, boot and pid namespace differ from this process's."""
        me, info = identity(), self.info or {}
        names = {"host": "host", "boot": "boot", "pidns": "container (pid namespace)"}
        return " and ".join(names[k] for k in names if info.get(k) != me[k]) or "pid space"


def parse(text: str) -> dict[str, Any] | None:
    """The holder a lock names: ``{"pid": ...}`` (a bare id, written by an earlier dpcap) or
    this version's JSON; None for an empty or unreadable lock."""
    text = text.strip()
    if text.isascii() and text.isdigit():
        info: Any = {"pid": int(text)}
    else:
        try:
            info = json.loads(text)
        except ValueError:
            return None
    if not isinstance(info, dict):
        return None
    pid = info.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid < 2**31:
        return None
    start = info.get("start")
    if start is not None and (isinstance(start, bool) or not isinstance(start, int)):
        return None  # not what dpcap writes: a start time of another kind proves no death
    if any(not isinstance(info.get(key), (str, type(None))) for key in ("host", "boot", "pidns")):
        return None
    return info
