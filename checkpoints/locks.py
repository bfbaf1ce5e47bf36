"""The LOCK of a run store: one driver at a time.

In a folder (:attr:`~ladders.checkpoints.backend.Backend.leases` False) the LOCK is a file
created only if absent, naming its driver: pid and host, and where the host has them its
boot id, pid namespace and the process's start (:func:`identity`), so that a LOCK left
by a driver that is gone is known as such on this host (:func:`driver_gone`) and taken
over. On object storage (``leases``) no pid can vouch for a driver on another machine:
the LOCK is a lease, renewed by compare-and-swap on its ETag every quarter of its
length (:class:`_Lease`), taken over once it has run out, or at once where its driver
is proven gone on this host. :class:`~ladders.checkpoints.store.RunStore` holds one
:class:`StoreLock`; ``ladders status`` reads who holds it (:meth:`StoreLock.locked_by`).
"""

from __future__ import annotations

import functools
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ladders.checkpoints.backend import Backend, lease_seconds
from ladders.checkpoints.errors import StoreError
from ladders.checkpoints.files import compact_json

#: Seconds after which an empty or unreadable LOCK is known to be left over.
LOCK_GRACE = 10.0
#: Seconds a lease is held beyond its length before another driver may take it: object
#: stores date objects to the second, and clocks differ a little between machines.
CLOCK_SLACK = 2.0


class StoreLock:
    """The LOCK of the store on ``backend``: :meth:`acquire`, :meth:`release`, and who
    holds it. ``lease_seconds``: how long a lease lasts after its last renewal
    (``LADDERS_LEASE_SECONDS``, checked)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.lease_seconds = lease_seconds()
        self._lease: _Lease | None = None

    @property
    def url(self) -> str:
        return self.backend.url

    def acquire(self) -> None:
        """Take the store's LOCK or explain who holds it and the way out (where the
        backend :attr:`~.backend.Backend.leases`, a lease: :meth:`_acquire_lease`).

        A lock left by a dead driver on this host (kill -9, power loss of the process;
        :func:`driver_gone`) is taken over, and so is an empty or unreadable one older than
        :data:`LOCK_GRACE` seconds (a driver writes its pid as it creates the lock).
        A lock held from another host cannot be checked from here: the message says
        which file to delete once that solve is known to be gone.
        """
        if self.backend.leases:
            self._acquire_lease()
            return
        me = {**identity(), "since": time.time()}
        for _ in range(2):
            try:
                self.backend.create("LOCK", compact_json(me))
            except FileExistsError:
                holder = self.locked_by()
                if holder is None:
                    try:
                        age = self.backend.age("LOCK")
                    except FileNotFoundError:
                        continue
                    if age > LOCK_GRACE:
                        self.backend.delete("LOCK")  # garbage, and no driver is writing it
                        continue
                    raise StoreError(f"{self.url} is being locked by another solve right now (its "
                                     f"LOCK is {age:.0f} s old and not written yet); try again "
                                     f"in {max(1.0, LOCK_GRACE - age):.0f} s: an unwritten LOCK "
                                     f"is taken over after {LOCK_GRACE:.0f} s") from None
                if driver_gone(holder, hostname_enough=True):
                    self.backend.delete("LOCK")  # stale: its driver is gone
                    continue
                where = "this host" if holder["host"] == me["host"] else f"host {holder['host']}"
                raise StoreError(f"{self.url} is locked by a running solve (pid {holder['pid']} on "
                                 f"{where}); wait for it or stop it first; if it is gone, delete "
                                 f"{self.url}/LOCK") from None
            return
        raise StoreError(f"{self.url}: could not take the LOCK; if no solve is running, delete "
                         f"{self.url}/LOCK")


    def _acquire_lease(self) -> None:
        """The LOCK as a lease: created only if absent, with this driver's owner token;
        renewed by a thread of this process every quarter of :attr:`lease_seconds`; taken
        over from another driver only once it has not been renewed for that long (the
        object's age on the store's clock), by compare-and-swap on the ETag, so that of
        two drivers that find it expired one wins. A crashed driver blocks the store for
        one lease at most, and not at all where it is known to be gone (:func:`driver_gone`:
        it ran on this host, proven by boot id and pid namespace, and its process is not
        running), which is taken over at once by the same compare-and-swap; a live one
        never loses it while it renews."""
        backend: Any = self.backend
        me = {"owner": os.urandom(8).hex(), **identity(), "since": time.time(),
              "lease_seconds": self.lease_seconds}
        for _ in range(2):
            try:
                backend.create("LOCK", compact_json(me))
                break
            except FileExistsError:
                pass
            try:
                raw, etag = backend.read_versioned("LOCK")
                age = backend.age("LOCK")
            except FileNotFoundError:
                continue  # released meanwhile: create it again
            holder = parse_lock(raw)
            limit = (float(holder.get("lease_seconds", self.lease_seconds)) + CLOCK_SLACK
                     if holder else LOCK_GRACE)
            gone = bool(holder) and driver_gone(holder)
            wait = max(0.0, limit - age)
            if etag is None or (age <= limit and not gone):
                who = (f"pid {holder['pid']} on host {holder['host']}" if holder
                       else "a driver that is writing it now")
                raise StoreError(f"{self.url} is locked by a running solve ({who}); its lease "
                                 f"runs out {wait:.0f} s from now unless that solve renews it; "
                                 "if it is gone, try again then") from None
            if not backend.swap("LOCK", compact_json(me), etag):
                continue  # another driver took it first: read whose it is now
            if gone and age <= limit:
                print(f"ladders: {self.url}: the driver that held its lease (pid {holder['pid']} "
                      f"on this host) is gone: the lease is taken over now, {wait:.0f} s before "
                      "it would run out", file=sys.stderr, flush=True)
            break
        else:
            raise StoreError(f"{self.url}: could not take the LOCK (it came and went); try again")
        self._lease = _Lease(self, me)
        self._lease.start()

    def lost(self) -> bool:
        """Whether this driver's lease was taken over (it was not renewed in time)."""
        return self._lease is not None and self._lease.lost

    def release(self) -> None:
        """Give the LOCK back (a lease only if it is still this driver's)."""
        if self._lease is not None:
            self._lease.stop()
            lease, self._lease = self._lease, None
            if lease.lost or parse_lock(self._read_or_empty("LOCK")).get("owner") != lease.me["owner"]:
                return  # another driver holds it now: not ours to delete
        self.backend.delete("LOCK")

    def _read_or_empty(self, key: str) -> bytes:
        try:
            return self.backend.read(key)
        except FileNotFoundError:
            return b""

    def locked_by(self) -> dict[str, Any] | None:
        """Who holds the LOCK (``pid``, ``host``, ``since``), or None when there is no
        readable lock of the right shape."""
        try:
            holder = parse_lock(self.backend.read("LOCK"))
        except OSError:
            return None
        return holder or None

    def unwritten_lock_age(self) -> float | None:
        """The age in seconds of a LOCK that holds no holder (a driver creating it, or
        garbage; :meth:`acquire` takes it over after :data:`LOCK_GRACE` seconds), or
        None when there is no such LOCK."""
        if self.locked_by() is not None:
            return None
        try:
            return self.backend.age("LOCK")
        except OSError:
            return None

    def lease_left(self) -> float | None:
        """For a lease (object storage): seconds until the LOCK runs out unless renewed
        (negative: it has run out); None for a folder's LOCK (its holder's pid is
        checked instead) or no LOCK."""
        holder = self.locked_by()
        if holder is None or "lease_seconds" not in holder:
            return None
        try:
            return float(holder["lease_seconds"]) + CLOCK_SLACK - self.backend.age("LOCK")
        except FileNotFoundError:
            return None


class _Lease(threading.Thread):
    """Renews this driver's lease (the LOCK on object storage) every quarter of its
    length, by compare-and-swap on the ETag it last wrote; ``lost`` once that fails
    (another driver took the store over after the lease ran out)."""

    def __init__(self, lock: StoreLock, me: dict[str, Any]) -> None:
        super().__init__(name="ladders-lease", daemon=True)
        self.lock, self.me = lock, me
        self.lost = False
        self.renewed = time.monotonic()
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(self.lock.lease_seconds / 4):
            if not self.renew():
                return

    def renew(self) -> bool:
        """Rewrite the LOCK if it is still this driver's (compare-and-swap on its ETag);
        False, and ``lost``, when another driver holds it now."""
        backend: Any = self.lock.backend
        try:
            try:
                raw, etag = backend.read_versioned("LOCK")
            except FileNotFoundError:
                raw, etag = b"", None
            mine = parse_lock(raw).get("owner") == self.me["owner"]
            renewed = compact_json({**self.me, "renewed": time.time()})
            if not mine or not backend.swap("LOCK", renewed, etag):
                self.lost = True
            else:
                self.renewed = time.monotonic()
        except Exception:  # the store unreachable for a moment: try again next time,
            # unless the lease may have run out meanwhile (then another driver may hold it)
            self.lost = time.monotonic() - self.renewed >= self.lock.lease_seconds
        return not self.lost

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join()


def parse_lock(raw: bytes) -> dict[str, Any]:
    """A LOCK's holder (``pid``, ``host``, ``since``, where its host has them ``boot_id``,
    ``pid_ns`` and ``start_ticks`` (:func:`identity`), and for a lease ``owner`` and
    ``lease_seconds``), or ``{}`` when it is empty or not of that shape."""
    try:
        holder = json.loads(raw)
    except ValueError:
        return {}
    ok = (isinstance(holder, dict) and isinstance(holder.get("pid"), int)
          and isinstance(holder.get("host"), str))
    return holder if ok else {}


@functools.cache
def _this_machine() -> dict[str, str]:
    """This host's boot id and this process's pid namespace, where ``/proc`` gives both
    (Linux), else ``{}``: with the hostname, what proves that a LOCK was written by a
    process whose pid means the same here (not another machine of the same name, a
    container with pids of its own, or this host before a reboot)."""
    try:
        return {"boot_id": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
                "pid_ns": os.readlink("/proc/self/ns/pid")}
    except OSError:
        return {}


def _stat(pid: int) -> tuple[str, int] | None:
    """Process ``pid``'s state (``Z``: a zombie, ended and not yet waited for) and when it
    started, in clock ticks after boot (fields 3 and 22 of ``/proc/PID/stat``), or None
    where that cannot be read (no such process, no ``/proc``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0], int(fields[19])
    except (OSError, ValueError, IndexError):
        return None


def identity() -> dict[str, Any]:
    """What a LOCK says of its driver: ``pid`` and ``host``, and where this host has them
    (:func:`_this_machine`) its ``boot_id``, ``pid_ns`` and the process's ``start_ticks``
    (a later process given the same pid started later)."""
    me: dict[str, Any] = {"pid": os.getpid(), "host": socket.gethostname(), **_this_machine()}
    stat = _stat(os.getpid())
    if me.keys() > {"pid", "host"} and stat is not None:
        me["start_ticks"] = stat[1]
    return me


def driver_gone(holder: dict[str, Any], *, hostname_enough: bool = False) -> bool:
    """Whether the driver a LOCK names (:func:`parse_lock`) is known to be gone: it ran
    on this host, and its pid runs no process here, a zombie, or one that started after
    it (the pid reused). "This host" is proven by the LOCK's boot id and pid namespace,
    equal to this process's (:func:`identity`); a LOCK without them (an older version, a
    host without ``/proc``) is never judged gone: its lease is waited out. With
    ``hostname_enough`` (a folder's LOCK, as before boot ids were recorded: a folder is
    not expected to be shared with another machine of the same name) the hostname
    suffices for a pid that runs no process."""
    if holder["host"] != socket.gethostname():
        return False
    machine = _this_machine()
    proven = bool(machine) and all(holder.get(key) == value for key, value in machine.items())
    if not (proven or hostname_enough):
        return False
    if not pid_alive(holder["pid"]):
        return True
    started = holder.get("start_ticks")
    stat = _stat(holder["pid"]) if proven and isinstance(started, int) else None
    return stat is not None and (stat[0] == "Z" or stat[1] != started)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True



