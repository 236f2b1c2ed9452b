"""The ``ask`` tool's work: one question at a time on the one model (questions queue as
on `kgstore serve`'s /ask), with a progress message at each stage: waiting for the
model, loading it, "linking/started", each model call, "done"."""
from __future__ import annotations

from typing import Any, Awaitable, Callable

import anyio
import anyio.from_thread

from ._model import WarmModel

Report = Callable[[str], Awaitable[None]]


async def ask_question(state, model: WarmModel, question: str, method: str, report: Report) -> dict[str, Any]:
    """The answer to ``question`` by ``method`` as ``Answer.to_dict(trace=False)``: the
    answers or the refusal with its reason, the executed query, the evidence facts and
    the entities meant. ``report(message)`` is awaited at each stage."""
    queue = state.ask_queue.status()
    if queue["running"] or queue["waiting"]:
        await report(f"waiting for the model: {queue['running'] + queue['waiting']} question(s) ahead")
    snapshot = state.snapshot
    async with state.ask_queue.turn():
        if not model.loaded:
            await report("loading the model")
            await anyio.to_thread.run_sync(model.model)
        await report("linking/started")

        def tell(call: int) -> None:  # in the worker thread: hand the message to the event loop
            try:
                anyio.from_thread.run(report, f"model call {call}")
            except Exception:  # the client went away: the answer still finishes, unreported
                pass

        first_call = model.calls
        model.listener = lambda calls: tell(calls - first_call)
        try:
            answer = await anyio.to_thread.run_sync(
                lambda: state.method(snapshot, method, {}).answer(question))
        finally:
            model.listener = None
    await report("done: refused" if answer.refused else "done: answered")
    return answer.to_dict(trace=False)
