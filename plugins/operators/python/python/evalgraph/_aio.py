"""`async def` checks inside the engine (used by the plugin and by evalgraph.achat, not by users).

Each engine worker thread runs its coroutines to completion on its own event loop, made on its first async
call and reused for every later one. evalgraph.achat sends its request from a thread of a shared pool (the
engine's chat call blocks until the answer is in), so the loop goes on while several calls of one record wait.
A record's call does not end before every request it sent is answered: the engine's record outlives them all.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from typing import Any, Awaitable, Callable, List, Optional, Tuple

import evalgraph

_local = threading.local()  # .loop: this worker's event loop; .pending: the current call's achat requests
_pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
_pool_lock = threading.Lock()
POOL_THREADS = 64  # achat requests waiting at once in the process (the providers' max_in_flight bounds them)


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=POOL_THREADS,
                                                          thread_name_prefix="evalgraph-achat")
        return _pool


def _loop() -> asyncio.AbstractEventLoop:
    loop = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _local.loop = loop
    return loop


def _settle(loop: asyncio.AbstractEventLoop) -> Optional[BaseException]:
    """Cancels the tasks a failed call left on the loop and lets them end; the interruption (evalgraph.Timeout)
    that came meanwhile, if one did (the loop is then dropped)."""
    try:
        tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        return None
    except BaseException as e:  # noqa: B036
        return e


def run(coro: Awaitable[Any]) -> Any:
    """Runs a check's coroutine to completion on this thread's event loop and returns its result."""
    loop = _loop()
    _local.pending = []
    try:
        return loop.run_until_complete(coro)
    except Exception:
        interrupted = _settle(loop)
        if interrupted is not None:  # the node's timeout passed while the tasks ended: that is the record's error
            _drop(loop)
            raise interrupted from None
        raise
    except BaseException:  # evalgraph.Timeout (raised anywhere, the loop's own code too): a fresh loop next time
        _settle(loop)
        _drop(loop)
        raise
    finally:
        _wait_all(_local.pending)
        _local.pending = None


def _wait_all(pending: List[concurrent.futures.Future]) -> None:
    """Waits for every request a call sent (the record they are attributed to ends with the call), even when
    the node's timeout interrupts the wait; the interruption is raised afterwards."""
    interrupted: Optional[BaseException] = None
    while pending:
        try:
            concurrent.futures.wait(pending)
            break
        except BaseException as e:  # noqa: B036 (evalgraph.Timeout: raised once the requests are answered)
            interrupted = e
    if interrupted is not None:
        raise interrupted


def _drop(loop: asyncio.AbstractEventLoop) -> None:
    _local.loop = None
    try:
        loop.close()
    except BaseException:  # noqa: B036 (a loop that cannot close is left to the collector)
        pass


def sync(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """An `async def` check as the plain function the plugin calls."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return run(fn(*args, **kwargs))
    call.__evalgraph_async__ = True  # type: ignore[attr-defined]
    return call


async def chat_in_pool(provider: Optional[str], request: str) -> Tuple[bool, str]:
    """The engine's chat call for evalgraph.achat, made from a pool thread for the record this thread works on."""
    import _evalgraph_async
    ctx = _evalgraph_async.context()
    pending = getattr(_local, "pending", None)
    if ctx is None or pending is None:
        raise evalgraph.OutsideRunError(
            "evalgraph.achat works only inside an `async def` check while the node processes a record, on the "
            "engine's event loop (not at import, not from a thread or an event loop of your own)")
    fut = _executor().submit(_evalgraph_async.chat, ctx, provider, request)
    pending.append(fut)
    return await asyncio.wrap_future(fut)
