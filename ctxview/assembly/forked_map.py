"""A map over many items shared with one forked process, for per-item work too large for one core.

Rendering every message of a 100,000-message session takes seconds of pure Python with no single hot
spot; on a machine with an idle core, a forked copy of this process can do the first part of the list
while this one does the rest.  The child sends its results back as one ``marshal`` blob through a
pipe, so they must be values ``marshal`` holds; anything the child could not do or send (an
exception, a value ``marshal`` cannot hold, the child dying) is simply done again here, so the result
is always what ``[function(item) for item in items]`` gives, whichever process computed each item.
"""

from __future__ import annotations

import gc
import marshal
import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

# below this many items the work takes milliseconds: a fork costs more than it saves
FORK_FROM_ITEMS = 4000
# the child's part of the list: this process also reads the child's results back (and forks it)
CHILD_SHARE = 0.5
_BATCH = 4096  # results per marshal blob the child sends


def fork_helps(count: int) -> bool:
    """True where a fork is safe and likely to help: ``count`` items or more, no other thread in this
    process (a forked copy of a threaded process may inherit locks that are never released), Linux, a
    second core this process may use, and a core left idle by the others: on a machine busy with others
    the child mostly waits, and copying its results back then makes the whole slower, not faster
    (measured on 2 cores beside two busy processes).

    Whether a core is idle: ``core_left_idle``."""
    if count < FORK_FROM_ITEMS:
        return False
    return core_left_idle()


def core_left_idle() -> bool:
    """True where forking is safe (Linux, no other thread in this process: a forked copy of a threaded process
    may inherit locks that are never released) and another core is idle for the child.

    Idle is read from the machine's idle time since this process last looked (its start, or the end of its
    last fork: ``idle_cores``) where that window is long enough; else from the processes running now (the
    fewest of a few looks at ``/proc/loadavg``'s run queue, this one included); else from the 1-minute load
    average.  That average counts this process and, for a minute, every child it has just had and every
    process of a run just before: right after a forked range a sweep's own fork was refused by it on an
    idle machine.
    """
    if not sys.platform.startswith("linux") or threading.active_count() > 1:
        return False  # (elsewhere a fork may be unsafe once system frameworks are loaded: macOS)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    if cores < 2:
        return False
    whole_machine = cores == os.cpu_count()  # (the machine's counts are ours to read: all of its cores ours)
    idle = idle_cores() if whole_machine else None
    if idle is not None:
        return idle >= IDLE_CORE
    running = _fewest_running() if whole_machine else None
    if running is not None:
        return running < cores
    try:
        return os.getloadavg()[0] < cores
    except OSError:
        return True


# run-queue looks, this far apart: a process busy on the other core is running or ready at every look, a blip
# (a process that just woke up, or one being torn down) at one of them (one look refused a sweep's fork)
RUN_QUEUE_LOOKS = 3
RUN_QUEUE_GAP = 0.002


def _fewest_running() -> int | None:
    """The fewest processes ``_running_now`` saw in ``RUN_QUEUE_LOOKS`` looks; None where it cannot look."""
    import time

    fewest: int | None = None
    for look in range(RUN_QUEUE_LOOKS):
        if look:
            time.sleep(RUN_QUEUE_GAP)
        running = _running_now()
        if running is None:
            return None
        fewest = running if fewest is None else min(fewest, running)
    return fewest


def _running_now() -> int | None:
    """Processes (threads) running or ready to run on the machine this instant, this one included; None where
    ``/proc/loadavg`` cannot be read."""
    try:
        with open("/proc/loadavg", "rb") as file:
            return int(file.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


# a core counts as idle when the machine's idle time since the last look was at least this many cores' worth: a
# child with 60% of a core does its half in 0.83 of the time one process takes for the whole (the fork's costs
# aside), so below that a fork stops paying
IDLE_CORE = 0.6
# the shortest window (in clock ticks of all cores together, 100 a second each) idle time is judged over
_MIN_WINDOW_TICKS = 30


def _cpu_times() -> tuple[int, int] | None:
    """(idle ticks, all ticks) of the whole machine so far (``/proc/stat``), or None where it cannot be read."""
    try:
        with open("/proc/stat", "rb") as file:
            fields = file.readline().split()
        if fields[0] != b"cpu":
            return None
        ticks = [int(field) for field in fields[1:]]
    except (OSError, ValueError, IndexError):
        return None
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return idle, sum(ticks[:8])


_last_look = _cpu_times()


def idle_cores() -> float | None:
    """How many cores the machine left idle, on average, since the last look (None where the window is too
    short or ``/proc/stat`` cannot be read); a window that is judged starts the next one."""
    global _last_look
    now = _cpu_times()
    before = _last_look
    if now is None or before is None:
        return None
    window = now[1] - before[1]
    if window < _MIN_WINDOW_TICKS:
        return None
    _last_look = now
    machine_cores = os.cpu_count() or 1
    return (now[0] - before[0]) / window * machine_cores


def look_again() -> None:
    """Start the idle window now (after a fork ends: the child's busy core says nothing of the others)."""
    global _last_look
    _last_look = _cpu_times()


def forked_map(
    function: Callable[[T], Any],
    items: Sequence[T],
    *,
    fork: bool | None = None,
    child_share: float = CHILD_SHARE,
    handed_off: Callable[[Sequence[T]], None] | None = None,
    send: Callable[[Any], Any] | None = None,
) -> list[Any]:
    """``[function(item) for item in items]``, the first ``child_share`` of the items in a forked process.

    ``fork``: None decides with ``fork_helps``; False never forks; True forks whenever the platform can.
    ``function`` must not depend on which process runs it (the child's side effects are lost) and
    should be deterministic: an item the child could not do is done again here, and an exception it
    raises here propagates (the child is then ended).  ``handed_off`` is called here with the child's
    items as soon as the child has its own copy of them (to let go of what only their work needs: if
    the child fails, ``function`` is called on them here all the same).  ``send``: what the child sends of
    each result (the result itself by default); it must give a value ``function`` could have given,
    since the child's items come back as ``send(function(item))``.
    """
    if fork is None:
        fork = fork_helps(len(items))
    split = min(len(items), max(0, round(len(items) * child_share)))
    if not fork or not hasattr(os, "fork") or split == 0:
        return [function(item) for item in items]
    started = fork_with_pipe(partial(_compute_and_send, function if send is None else _then(function, send),
                                     items[:split]))
    if started is None:
        return [function(item) for item in items]
    pid, read_end = started
    finished = False
    try:
        if handed_off is not None:
            handed_off(items[:split])
        own = [function(item) for item in items[split:]]
        theirs = _collect(read_end, pid, split)
        look_again()
        finished = True
    finally:
        os.close(read_end)
        if not finished:  # this process raised: the child's work is not wanted
            _end(pid)
    if theirs is None:  # the child failed: its part is done here
        return [function(item) for item in items[:split]] + own
    results, missing = theirs
    for index in missing:
        results[index] = function(items[index])
    return results + own


def _then(function: Callable[[T], Any], send: Callable[[Any], Any]) -> Callable[[T], Any]:
    return lambda item: send(function(item))


def fork_with_pipe(work: Callable[[int], None]) -> tuple[int, int] | None:
    """Fork a child that runs ``work(write_end)`` of a new pipe and leaves at once (``exit_after``: no exit handler,
    no flush of buffers this process inherited); (its pid, the pipe's read end) here, or None where the fork
    failed (the pipe closed)."""
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: never returns
        os.close(read_end)
        exit_after(partial(work, write_end))
    os.close(write_end)
    return pid, read_end


def _compute_and_send(function: Callable[[T], Any], items: Sequence[T], write_end: int) -> None:
    """In the child: compute everything, then send it.  (Sending as it goes would stall on the full pipe while
    the parent does its part.)"""
    results: list[Any] = []
    missing: list[int] = []
    for index, item in enumerate(items):
        try:
            results.append(function(item))
        except Exception:  # (done again by the parent, which then sees the exception itself)
            results.append(None)
            missing.append(index)
    for start in range(0, len(results), _BATCH):
        batch = results[start : start + _BATCH]
        try:
            blob = marshal.dumps(batch)
        except ValueError:  # a result marshal cannot hold: send the others
            for index, result in enumerate(batch):
                if not marshallable(result):
                    batch[index] = None
                    missing.append(start + index)
            blob = marshal.dumps(batch)
        _send(write_end, blob)
    _send(write_end, marshal.dumps(sorted(missing)))


def run_detached(work: Callable[[], None], *, close: Sequence[int] = ()) -> bool:
    """Start ``work`` in a process of its own that goes on whatever this one does next (exits, or goes on
    working); False (nothing started) where forking is unsafe (another thread) or impossible, and the caller
    does the work itself.

    Two forks: the one between leaves at once and is reaped here, so nothing is left for this process to
    reap; the process doing ``work`` is adopted by whoever adopts orphans.  It has a session of its own (a
    signal to the caller's process group, a closed terminal, never reaches it) and its standard input,
    output and error on the null device, so that a caller reading this process's output to its end (``$(…)``,
    a pipe) stops waiting when this process ends, not when ``work`` does; ``close``: other descriptors it must
    not hold either (the write end of a pipe whose reader waits for this process's end).  It leaves as
    ``exit_after`` does: no exit handler of this process runs twice.
    """
    if not hasattr(os, "fork") or not hasattr(os, "setsid") or threading.active_count() > 1:
        return False
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid == 0:  # the process between: start the one doing the work, and leave (never returns)
        exit_after(partial(_start_detached, work, close))
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return False
    return status == 0


def _start_detached(work: Callable[[], None], close: Sequence[int]) -> None:
    if os.fork() == 0:  # (a failed fork raises: status 1, and the caller does the work)
        exit_after(partial(_detached, work, close))


def _detached(work: Callable[[], None], close: Sequence[int]) -> None:
    gc.disable()  # (a collection would walk the inherited heap, copying every page it touches)
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    for fd in close:
        try:
            os.close(fd)
        except OSError:
            pass
    _trim_heap()
    work()


def _trim_heap() -> None:
    """Give back the free memory of the C heap this process inherited (glibc's ``malloc_trim``): its pages count
    in this process's resident memory until then, and what ``work`` allocates next would only add to them (a first
    open's cache writer at 100,000 items: 25-45 MB given back in a millisecond; its work then stays within the
    memory it inherited, where it grew ~15 MB past it before)."""
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, ImportError):  # not glibc
        return
    trim(0)


def exit_after(work: Callable[[], None]) -> NoReturn:
    """Run ``work`` in a forked process and leave it at once (status 0 if it returned, else 1): whatever
    happens, the child never returns into the caller, runs no exit handler and flushes no inherited buffer."""
    status = 1
    try:
        work()
        status = 0
    except BaseException:
        pass
    finally:
        os._exit(status)


def _send(fd: int, blob: bytes) -> None:
    view = memoryview(len(blob).to_bytes(8, "big") + blob)
    while view:
        view = view[os.write(fd, view) :]


def _receive(reader: Any) -> Any:
    """The next blob's value; raises EOFError when the child sent no more."""
    size = int.from_bytes(_read_exactly(reader, 8), "big")
    return marshal.loads(_read_exactly(reader, size))


def _read_exactly(reader: Any, size: int) -> bytearray:
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        count = reader.readinto(view[done:])
        if not count:
            raise EOFError("the forked process sent less than it announced")
        done += count
    return buffer


def _collect(read_end: int, pid: int, count: int) -> tuple[list[Any], list[int]] | None:
    """(the child's ``count`` results, the indexes of those it could not do), or None when it failed.

    The results come in batches of ``_BATCH``, each loaded as soon as it is read: the bytes of the
    whole lot are never held at once."""
    results: list[Any] = []
    missing: Any = None
    try:
        with os.fdopen(os.dup(read_end), "rb", buffering=0) as reader:
            while len(results) < count:
                batch = _receive(reader)
                if not isinstance(batch, list) or not batch:
                    break
                results.extend(batch)
            missing = _receive(reader)
    except (EOFError, ValueError, TypeError, OSError):
        missing = None
    _, status = os.waitpid(pid, 0)
    if status != 0 or len(results) != count or not isinstance(missing, list):
        return None
    if any(type(index) is not int or not 0 <= index < count for index in missing):
        return None
    return results, missing


def _end(pid: int) -> None:
    import signal

    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass


class ForkedText:
    """Text a forked copy of this process makes while this one makes its own: the later part of a long output.

    The child writes ``make()``'s pieces, UTF-8, to an unnamed file (``unnamed_file``; never a pipe: it would
    stall once full, while this process is busy with its own part) and leaves at once.  ``write_to``
    then copies that text out, or answers False when the child failed, so that the caller makes the
    text itself: what is written is always what ``make()`` gives, whichever process made it.
    """

    def __init__(self, make: Callable[[], Iterable[str]]) -> None:
        self._file = unnamed_file()  # (raises OSError where no such file can be made)
        self._reaped = False
        try:
            self._pid = os.fork()
        except OSError:
            self._file.close()
            raise
        if self._pid == 0:  # the child: never returns
            _make_text(make, self._file.fileno())

    def write_to(self, write: Callable[[str], Any], *, skip: int = 0) -> bool:
        """Wait for the child and ``write`` its text (without its first ``skip`` characters); False if it failed
        (then nothing is written)."""
        import codecs

        try:
            _, status = os.waitpid(self._pid, 0)
            self._reaped = True
            look_again()
            if status != 0:
                return False
            self._file.seek(0)
            decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
            while True:
                block = self._file.read(1 << 20)
                text = decoder.decode(block, final=not block)
                if skip and text:
                    dropped = min(skip, len(text))
                    text, skip = text[dropped:], skip - dropped
                if text:
                    write(text)
                if not block:
                    return True
        finally:
            self._file.close()

    def cancel(self) -> None:
        """This process's part failed: end the child (unless ``write_to`` has waited for it) and let its file go."""
        if not self._reaped:
            self._reaped = True
            _end(self._pid)
        self._file.close()


def unnamed_file() -> Any:
    """A new read-write binary file with no name: in memory where the platform has ``memfd_create`` (Linux),
    else a temporary file.  (Importing ``tempfile`` and what it imports cost the JSON writer ~10 ms right
    before its fork, on the path the whole command waits for.)"""
    create = getattr(os, "memfd_create", None)
    if create is not None:
        try:
            fd = create("ctxview-text", os.MFD_CLOEXEC)
        except OSError:
            pass
        else:
            return open(fd, "w+b")
    import tempfile

    return tempfile.TemporaryFile()


def _make_text(make: Callable[[], Iterable[str]], fd: int) -> None:
    exit_after(partial(_write_pieces, make, fd))


def _write_pieces(make: Callable[[], Iterable[str]], fd: int) -> None:
    for piece in make():
        _write_all(fd, piece.encode("utf-8", "surrogatepass"))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def marshallable(value: Any) -> bool:
    """True when ``marshal`` can hold ``value`` (a JS number kept as text, for one, it cannot)."""
    try:
        marshal.dumps(value)
    except ValueError:
        return False
    return True
