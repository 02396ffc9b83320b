"""evalgraph from Python.

Inside a pipeline (a node with ``uses: python``): declare a check with :func:`node`, ask an LLM through the
engine with :func:`chat`. From a plain ``python3``: read a results folder with :func:`read_run`.
docs/python.md is the reference.
"""

from __future__ import annotations

import typing
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, TypeVar, Union

__version__ = "0.1.0"
__all__ = ["node", "chat", "achat", "read_run", "Run", "Timeout", "ChatError", "OutsideRunError", "OutsideRun"]

F = TypeVar("F", bound=Callable[..., Any])
Message = Dict[str, Any]


class Timeout(BaseException):
    """Raised inside a check that ran past its node's ``timeout_s`` (or when the run is stopped at once).

    A BaseException, like KeyboardInterrupt: ``except Exception`` does not swallow it, so the call ends and its
    record fails with this message. Do not catch it."""


class ChatError(Exception):
    """evalgraph.chat could not get an answer: the provider failed after the engine's retries, the request
    was refused, or the answer had no text. The message says which (API keys are never in it)."""


class OutsideRunError(RuntimeError):
    """An evalgraph function that needs a running pipeline (chat, achat) was called outside one: from a plain
    python3, at import, or from a thread of the script's own."""


OutsideRun = OutsideRunError  # the name before 0.2; kept so that `except evalgraph.OutsideRun` still catches it

_JSON_TYPES = (bool, int, float, str, list, dict, type(None))


def _typed_dict_outputs(outputs: Any) -> Optional[Dict[str, Any]]:
    """The outputs a TypedDict class declares ({name: type}), None when outputs is not a TypedDict class.
    Every key counts as required (the function returns exactly the declared keys)."""
    if not (isinstance(outputs, type) and issubclass(outputs, dict) and hasattr(outputs, "__total__")):
        return None
    try:
        hints = typing.get_type_hints(outputs)
    except Exception as e:  # a forward reference that does not resolve
        raise TypeError(f"evalgraph.node: cannot read the TypedDict {outputs.__name__}'s types: {e}") from None
    return {k: _strip_required(v) for k, v in hints.items()}


def _strip_required(h: Any) -> Any:
    """NotRequired[X] / Required[X] as X (3.11's TypedDict markers: every output is returned anyway)."""
    origin = typing.get_origin(h)
    names = ("Required", "NotRequired")
    if origin is not None and getattr(origin, "_name", None) in names:
        return typing.get_args(h)[0]
    return h


def node(outputs: Union[Mapping[str, Any], type], calls_llm: bool = False,
         lower_is_better: Iterable[str] = ()) -> Callable[[F], F]:
    """Declares a function as a check: ``@evalgraph.node(outputs={"ok": bool, "score": float})``.

    outputs: a dict from output name to its type: bool, int, float, str, list, dict, None, typing.Any/object,
    ``X | None`` / ``Optional[X]``, ``list[...]``/``dict[...]`` (only the outer type is checked); or a
    ``typing.TypedDict`` class whose keys and types are the outputs. The function must return a dict with
    exactly these keys. Names are letters, digits, '_' and '-', not starting with '_'.
    calls_llm: True when the function calls evalgraph.chat / achat: the engine then runs it as it runs
    transform.llm (many records waiting for the LLM at once, up to the providers' max_in_flight).
    lower_is_better: names of outputs where a lower value is the better one (an error rate, a latency), so that
    ``evalgraph compare --fail-if-worse`` calls a rise a regression; every other output: higher is better.
    The function may be an ``async def``: the engine runs it to completion on its worker's event loop.
    Raises TypeError (at import, so ``evalgraph validate`` names the line) when outputs is not such a dict."""
    typed = _typed_dict_outputs(outputs)
    if typed is not None:
        outputs = typed
    if not isinstance(outputs, Mapping) or not outputs:
        raise TypeError("evalgraph.node(outputs=...) takes a non-empty dict of output name -> type "
                        "(e.g. outputs={\"ok\": bool}) or a TypedDict class, not "
                        f"{type(outputs).__name__}")
    for name in outputs:
        if not isinstance(name, str) or not _plain(name):
            raise TypeError(f"evalgraph.node: output name {name!r} must be letters, digits, '_' and '-', "
                            "not starting with '_'")
    if not isinstance(calls_llm, bool):
        raise TypeError("evalgraph.node(calls_llm=...) takes True or False")
    if isinstance(lower_is_better, str) or any(n not in outputs for n in lower_is_better):
        raise TypeError("evalgraph.node(lower_is_better=...) takes a list of names declared in outputs")
    declared = dict(outputs)

    def declare(fn: F) -> F:
        if not callable(fn):
            raise TypeError("@evalgraph.node(...) decorates a function")
        fn.__evalgraph__ = {"outputs": declared, "calls_llm": calls_llm,  # type: ignore[attr-defined]
                           "lower_is_better": list(lower_is_better)}
        return fn

    return declare


def _plain(name: str) -> bool:
    return bool(name) and name[0] != "_" and all(c.isalnum() or c in "_-" for c in name)


def _host(fn_name: str) -> Any:
    try:
        import _evalgraph_host as host
    except ImportError:
        raise OutsideRunError(f"evalgraph.{fn_name} works only inside a pipeline run "
                              "(a node with `uses: python`)") from None
    return host


def _request(fn_name: str, prompt: Optional[str], messages: Optional[List[Message]], system: Optional[str],
             provider: Optional[str], inference: Optional[Mapping[str, Any]], options: Dict[str, Any]) -> str:
    """The request of a chat / achat call as JSON text, its arguments checked: TypeError for a wrong type,
    ValueError for a wrong combination."""
    import json
    where = f"evalgraph.{fn_name}"
    if (prompt is None) == (messages is None):
        raise ValueError(f"{where} takes prompt=... or messages=[...], exactly one of them")
    if system is not None and not isinstance(system, str):
        raise TypeError(f"{where}: system must be a str, not {type(system).__name__}")
    if messages is None:
        if not isinstance(prompt, str):
            raise TypeError(f"{where}: prompt must be a str, not {type(prompt).__name__}")
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    elif system is not None:
        raise ValueError(f"{where}: give the system message inside messages=[...]")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
        raise TypeError(f"{where}: messages must be a list of {{\"role\": ..., \"content\": ...}} dicts")
    if inference is not None and not isinstance(inference, Mapping):
        raise TypeError(f"{where}: inference must be a dict, not {type(inference).__name__}")
    if provider is not None and not isinstance(provider, str):
        raise TypeError(f"{where}: provider must be a str (a provider of the pipeline), not {type(provider).__name__}")
    request = dict(inference or {})
    request.update(options)
    for k in ("model", "messages", "stream"):
        if k in request:
            raise ValueError(f"{where}: '{k}' is set by the engine, not by the call")
    request["messages"] = messages
    return json.dumps(request)


def _answer(ok: bool, text: str) -> str:
    import json
    if not ok:
        raise ChatError(text)
    try:
        content = json.loads(text)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        content = None
    if not isinstance(content, str):
        raise ChatError("the model's answer has no text content (choices[0].message.content)")
    return content


def chat(prompt: Optional[str] = None, *, messages: Optional[List[Message]] = None, system: Optional[str] = None,
         provider: Optional[str] = None, inference: Optional[Mapping[str, Any]] = None, **options: Any) -> str:
    """Asks the pipeline's LLM provider through the engine (its window, retries, cache, resume, usage, cost)
    and returns the answer's text (choices[0].message.content, as the model wrote it).

    prompt: the user message; or messages: a list of {"role", "content"} dicts (not both).
    system: a system message put first (with prompt only).
    provider: a provider of the pipeline (None: the pipeline's default).
    inference / **options: passed into the request as they are (temperature, top_p, max_tokens, seed, ...),
    as transform.llm's `inference`; not model, messages or stream.
    The wait for the answer releases the GIL. Raises ChatError (no answer after the engine's retries, a
    refused request, an answer without text), TypeError (an argument of the wrong type), ValueError (a wrong
    combination of arguments), OutsideRunError (not in a pipeline run), evalgraph.Timeout (the node's
    timeout_s passed while waiting: raised when the answer arrives)."""
    request = _request("chat", prompt, messages, system, provider, inference, options)
    host = _host("chat")
    ok, text = host.chat(provider, request)
    return _answer(ok, text)


async def achat(prompt: Optional[str] = None, *, messages: Optional[List[Message]] = None,
                system: Optional[str] = None, provider: Optional[str] = None,
                inference: Optional[Mapping[str, Any]] = None, **options: Any) -> str:
    """evalgraph.chat for an ``async def`` check: the same arguments, answer and errors, awaited; several
    achat calls of one record run at once (``await asyncio.gather(achat(...), achat(...))``), each waiting in
    a thread of the engine's pool while the event loop goes on. Only inside a check the engine runs (an
    ``async def`` node): elsewhere OutsideRunError."""
    from . import _aio
    request = _request("achat", prompt, messages, system, provider, inference, options)
    _host("achat")
    ok, text = await _aio.chat_in_pool(provider, request)
    return _answer(ok, text)


from .results import Run, read_run  # noqa: E402  (after the names above: results imports nothing of them)
