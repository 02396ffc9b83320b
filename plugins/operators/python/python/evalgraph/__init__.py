"""evalgraph from Python.

Inside a pipeline (a node with ``uses: python``): declare a check with :func:`node`, ask an LLM through the
engine with :func:`chat`. From a plain ``python3``: read a results folder with :func:`read_run`.
docs/python.md is the reference.
"""

__version__ = "0.1.0"
__all__ = ["node", "chat", "read_run", "Run", "Timeout", "ChatError", "OutsideRun"]


class Timeout(BaseException):
    """Raised inside a check that ran past its node's ``timeout_s`` (or when the run is stopped at once).

    A BaseException, like KeyboardInterrupt: ``except Exception`` does not swallow it, so the call ends and its
    record fails with this message. Do not catch it."""


class ChatError(Exception):
    """evalgraph.chat could not get an answer: the provider failed after the engine's retries, the request
    was refused, or the answer had no text. The message says which (API keys are never in it)."""


class OutsideRun(RuntimeError):
    """An evalgraph function that needs a running pipeline (chat) was called from a plain python3."""


_JSON_TYPES = (bool, int, float, str, list, dict, type(None))


def node(outputs, calls_llm=False, lower_is_better=()):
    """Declares a function as a check: ``@evalgraph.node(outputs={"ok": bool, "score": float})``.

    outputs: a dict from output name to its type: bool, int, float, str, list, dict, None, typing.Any/object,
    ``X | None`` / ``Optional[X]``, ``list[...]``/``dict[...]`` (only the outer type is checked). The function
    must return a dict with exactly these keys. Names are letters, digits, '_' and '-', not starting with '_'.
    calls_llm: True when the function calls evalgraph.chat: the engine then runs it as it runs transform.llm
    (many records waiting for the LLM at once, up to the providers' max_in_flight).
    lower_is_better: names of outputs where a lower value is the better one (an error rate, a latency), so that
    ``evalgraph compare --fail-if-worse`` calls a rise a regression; every other output: higher is better.
    Raises TypeError (at import, so ``evalgraph validate`` names the line) when outputs is not such a dict."""
    if not isinstance(outputs, dict) or not outputs:
        raise TypeError("evalgraph.node(outputs=...) takes a non-empty dict of output name -> type, "
                        "e.g. outputs={\"ok\": bool}")
    for name in outputs:
        if not isinstance(name, str) or not _plain(name):
            raise TypeError(f"evalgraph.node: output name {name!r} must be letters, digits, '_' and '-', "
                            "not starting with '_'")
    if not isinstance(calls_llm, bool):
        raise TypeError("evalgraph.node(calls_llm=...) takes True or False")
    if isinstance(lower_is_better, str) or any(n not in outputs for n in lower_is_better):
        raise TypeError("evalgraph.node(lower_is_better=...) takes a list of names declared in outputs")

    def declare(fn):
        if not callable(fn):
            raise TypeError("@evalgraph.node(...) decorates a function")
        fn.__evalgraph__ = {"outputs": dict(outputs), "calls_llm": calls_llm,
                           "lower_is_better": list(lower_is_better)}
        return fn

    return declare


def _plain(name):
    return bool(name) and name[0] != "_" and all(c.isalnum() or c in "_-" for c in name)


def chat(prompt=None, *, messages=None, system=None, provider=None, inference=None, **options):
    """Asks the pipeline's LLM provider through the engine (its window, retries, cache, resume, usage, cost)
    and returns the answer's text (choices[0].message.content, as the model wrote it).

    prompt: the user message; or messages: a list of {"role", "content"} dicts (not both).
    system: a system message put first (with prompt only).
    provider: a provider of the pipeline (None: the pipeline's default).
    inference / **options: passed into the request as they are (temperature, top_p, max_tokens, seed, ...),
    as transform.llm's `inference`; not model, messages or stream.
    The wait for the answer releases the GIL. Raises ChatError (no answer after the engine's retries, a
    refused request, an answer without text), ValueError (bad arguments), OutsideRun (not in a pipeline run),
    evalgraph.Timeout (the node's timeout_s passed while waiting: raised when the answer arrives)."""
    try:
        import _evalgraph_host as host
    except ImportError:
        raise OutsideRun("evalgraph.chat works only inside a pipeline run (a node with `uses: python`)") from None
    if (prompt is None) == (messages is None):
        raise ValueError("evalgraph.chat takes prompt=... or messages=[...], exactly one of them")
    if messages is None:
        if not isinstance(prompt, str):
            raise ValueError("evalgraph.chat: prompt must be a str")
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    elif system is not None:
        raise ValueError("evalgraph.chat: give the system message inside messages=[...]")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
        raise ValueError("evalgraph.chat: messages must be a list of {\"role\": ..., \"content\": ...} dicts")
    request = dict(inference or {})
    request.update(options)
    for k in ("model", "messages", "stream"):
        if k in request:
            raise ValueError(f"evalgraph.chat: '{k}' is set by the engine, not by the call")
    request["messages"] = messages
    if provider is not None and not isinstance(provider, str):
        raise ValueError("evalgraph.chat: provider must be a str (a provider of the pipeline)")
    import json
    ok, text = host.chat(provider, json.dumps(request))
    if not ok:
        raise ChatError(text)
    try:
        content = json.loads(text)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        content = None
    if not isinstance(content, str):
        raise ChatError("the model's answer has no text content (choices[0].message.content)")
    return content


from .results import Run, read_run  # noqa: E402  (after the names above: results imports nothing of them)
