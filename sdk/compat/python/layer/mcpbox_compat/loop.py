"""An asyncio event loop for a plugin: nothing runs beside the call, so there is no selector
to wait on (asyncio's default loop needs a socket pair, which WASI has not): timers sleep,
I/O is the host's and blocks, and executors (`asyncio.to_thread`, `run_in_executor`) run the
function inline (a plugin has one thread)."""

import asyncio
import time


class _NoSelector:
    def select(self, timeout):
        if timeout is None:
            raise RuntimeError("mcpbox: the server waits for an event that nothing in its sandbox can send "
                               "(a background task, a thread or a socket)")
        if timeout > 0:
            time.sleep(timeout)
        return []

    def close(self):
        pass


class Loop(asyncio.BaseEventLoop):
    def __init__(self):
        super().__init__()
        self._selector = _NoSelector()

    def _process_events(self, event_list):
        pass

    def _write_to_self(self):
        pass

    def run_in_executor(self, executor, func, *args):
        future = self.create_future()
        try:
            future.set_result(func(*args))
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as error:
            future.set_exception(error)
        return future


def install():
    import asyncio.events
    getter = getattr(asyncio.events, "_get_event_loop_policy", None) or asyncio.get_event_loop_policy
    type(getter())._loop_factory = Loop
