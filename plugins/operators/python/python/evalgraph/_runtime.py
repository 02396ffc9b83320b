"""The `python` node's side in Python (used by the plugin in plugins/operators/python, not by users).

describe(): what a node reads, writes and takes, from its script (`evalgraph validate` and every run call it
before any record moves). prepare(): the function and its fixed keyword arguments for the plugin's calls.
"""

import hashlib
import inspect
import json
import os
import sys
import types
import typing

import evalgraph

RESERVED = ("file", "function", "timeout_s", "interface")  # the node's own; promptfoo adds threshold
DEFAULT_TIMEOUT_S = 30.0

# Kinds of JSON value, as bits (the plugin checks outputs with them): enum Kind in the plugin's interpreter.h, the
# same numbers (tests/python/check_kinds.py holds them equal).
K_NULL, K_BOOL, K_INT, K_FLOAT, K_STR, K_LIST, K_DICT = 1, 2, 4, 8, 16, 32, 64
K_ANY = 127

_modules = {}  # absolute path -> (module, sha256)


class Resolved(typing.NamedTuple):
    """A node's script and function, found and checked (_resolve)."""
    path: str  # the script, absolute
    shown: str  # the script as the pipeline names it
    sha: str  # sha256 of the script's text
    function: object
    function_name: str
    signature: object  # inspect.Signature of the function
    hints: dict  # its type hints
    line: int  # the line it is defined on
    interface: str  # "evalgraph" or "promptfoo"


class Prepared(typing.NamedTuple):
    """What prepare() hands the plugin's create() (plugin.cpp reads it by these names)."""
    function: object  # what each record calls
    fixed: dict  # the keyword arguments every call gets (the node's `with:` but its own keys)
    output_kinds: object  # {output: kinds (K_* bits)} from @evalgraph.node(outputs=...), None for promptfoo
    interface: str  # "evalgraph" or "promptfoo"
    timeout_s: float
    path: str  # the script, absolute
    shown: str  # the script as the pipeline names it
    threshold: object  # promptfoo's threshold, or None
    promptfoo_config: dict  # promptfoo's config: the node's `with:` but its own keys (empty for evalgraph)


class ScriptError(Exception):
    """A problem with a node's script or parameters; param is the `with:` key it concerns ("" = the node)."""

    def __init__(self, param, message):
        super().__init__(message)
        self.param = param
        self.message = message


def _where(exc, path, shown):
    """'checks/x.py:7' — the deepest frame of the exception in the script (else its deepest frame)."""
    tb, best, last = exc.__traceback__, None, None
    while tb is not None:
        last = tb
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == path:
            best = tb
        tb = tb.tb_next
    t = best or last
    if t is None:
        return shown
    fname = shown if best is not None else t.tb_frame.f_code.co_filename
    return f"{fname}:{t.tb_lineno}"


def format_error(exc, path, shown):
    """One line for a record's _errors: 'ValueError: bad input (at checks/x.py:7 in check)'."""
    tb, best = exc.__traceback__, None
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == path:
            best = tb
        tb = tb.tb_next
    at = ""
    if best is not None:
        at = f" (at {shown}:{best.tb_lineno} in {best.tb_frame.f_code.co_name})"
    msg = str(exc)
    name = type(exc).__name__
    if isinstance(exc, evalgraph.Timeout):
        return f"Timeout: {msg}{at}"
    return f"{name}: {msg}{at}" if msg else f"{name}{at}"


def _load(path, shown):
    if path in _modules:
        return _modules[path]
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ScriptError("file", f"cannot read the script {shown}: {e.strerror}") from None
    sha = hashlib.sha256(data).hexdigest()
    try:
        code = compile(data, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        col = f":{e.offset}" if e.offset else ""
        raise ScriptError("file", f"{shown}:{e.lineno}{col}: {type(e).__name__}: {e.msg}") from None
    stem = os.path.splitext(os.path.basename(path))[0]
    name = "evalgraph_script_" + "".join(c if c.isalnum() else "_" for c in stem) + "_" + sha[:8]
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # a script imports its neighbours as a script run with python3 would
    try:
        exec(code, mod.__dict__)
    except evalgraph.Timeout:
        raise
    except BaseException as e:  # SystemExit and KeyboardInterrupt too: an import must not end the engine
        del sys.modules[name]
        raise ScriptError("file", f"{_where(e, path, shown)}: importing the script failed: "
                                  f"{type(e).__name__}: {e}") from None
    _modules[path] = (mod, sha)
    return _modules[path]


def _hint_name(h):
    if h is inspect.Parameter.empty:
        return None
    if isinstance(h, type):
        return h.__name__
    return str(h).replace("typing.", "")


def _union_args(h):
    origin = typing.get_origin(h)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return typing.get_args(h)
    return None


_SCHEMA_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
                 tuple: "array", dict: "object", type(None): "null"}
_KINDS = {bool: K_BOOL, int: K_INT, float: K_FLOAT | K_INT, str: K_STR, list: K_LIST, tuple: K_LIST,
          dict: K_DICT, type(None): K_NULL}


def _output_type(h):
    """The engine's type of an output declared with hint h (ABI 1.3's outputs), None where it is not one type:
    Optional[X] is X (a record may give None), int | float is a number."""
    args = _union_args(h)
    ts = {_output_type(a) for a in args if a is not None and a is not type(None)} if args is not None else None
    if ts is not None:
        if ts <= {"integer", "number"} and ts:
            return "number" if "number" in ts else "integer"
        return ts.pop() if len(ts) == 1 else None
    t = _SCHEMA_TYPES.get(typing.get_origin(h) or h) if isinstance(typing.get_origin(h) or h, type) else None
    return None if t == "null" else t


def _engine_outputs(decl_outputs, lower):
    out = {}
    for k, h in decl_outputs.items():
        d = {}
        t = _output_type(h)
        if t:
            d["type"] = t
        if k in lower:
            d["better"] = "lower"
        out[k] = d
    return out


def _schema(h):
    """A JSON Schema for a parameter's type hint ({} where the hint says nothing the engine can check)."""
    if h is inspect.Parameter.empty or h is typing.Any or h is object:
        return {}
    if h is None:
        h = type(None)
    args = _union_args(h)
    if args is not None:
        parts = [_schema(a) for a in args]
        if all(set(p) == {"type"} for p in parts):
            ts = []
            for p in parts:
                for t in (p["type"] if isinstance(p["type"], list) else [p["type"]]):
                    if t not in ts:
                        ts.append(t)
            return {"type": ts}
        return {} if any(not p for p in parts) else {"anyOf": parts}
    if typing.get_origin(h) is typing.Literal:
        return {"enum": list(typing.get_args(h))}
    base = typing.get_origin(h) or h
    t = _SCHEMA_TYPES.get(base)
    return {"type": t} if t else {}


def kinds(h):
    """The kinds of JSON value an output declared with type h may hold (bits K_*)."""
    if h is typing.Any or h is object:
        return K_ANY
    if h is None:
        return K_NULL
    args = _union_args(h)
    if args is not None:
        k = 0
        for a in args:
            k |= kinds(a)
        return k
    base = typing.get_origin(h) or h
    if base in _KINDS:
        return _KINDS[base]
    raise TypeError(f"output type {_hint_name(h)} is not a JSON type (bool, int, float, str, list, dict, None, "
                    "typing.Any, or a union of them)")


def _jsonable(v):
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        return repr(v)


def _resolve(params):
    """The script, its function and the node's own parameters, checked; raises ScriptError."""
    pdir = params.get("_pipeline_dir") or os.getcwd()
    shown = params.get("file")
    if not isinstance(shown, str) or not shown:
        raise ScriptError("", "a python node needs `file: <script.py>` (relative to the pipeline) in its `with:`")
    fname = params.get("function")
    if not isinstance(fname, str) or not fname:
        raise ScriptError("", "a python node needs `function: <name>` (a function of its script) in its `with:`")
    interface = params.get("interface", "evalgraph")
    if interface not in ("evalgraph", "promptfoo"):
        raise ScriptError("interface", f"interface must be evalgraph or promptfoo, not {interface!r}")
    path = os.path.abspath(os.path.join(pdir, shown))
    mod, sha = _load(path, shown)
    fn = getattr(mod, fname, None)
    if fn is None or not callable(fn):
        names = sorted(n for n, v in vars(mod).items()
                       if inspect.isfunction(v) and v.__module__ == mod.__name__ and not n.startswith("_"))
        what = "has no function" if fn is None else "has no callable"
        raise ScriptError("function", f"{shown} {what} '{fname}'; its functions: {', '.join(names) or '(none)'}")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as e:
        raise ScriptError("function", f"{shown}: cannot read the signature of '{fname}': {e}") from None
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # a forward reference that does not resolve: the annotations as written
        hints = {}
    try:
        line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        line = getattr(getattr(fn, "__code__", None), "co_firstlineno", 0)
    return Resolved(path, shown, sha, fn, fname, sig, hints, line, interface)


class _Ports:
    """What a check reads, writes and declares, as _describe collects it from its signature and declaration."""

    def __init__(self):
        self.reads, self.optional, self.described, self.required = [], [], [], []
        self.writes, self.calls_llm, self.outputs, self.engine_outputs, self.additional = [], False, {}, {}, False


def _promptfoo_ports(ports, sig, decl, mapped, columns, at, fname, props):
    """interface: promptfoo: get_assert(output, context), reading `output` and any mapped input."""
    props["threshold"] = {"type": "number", "description": "A number returned passes when it is at least this "
                                                            "(not set: when it is above 0)."}
    positional = [p for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 2 and not any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
        raise ScriptError("function", f"{at}: '{fname}' must take (output, context), as promptfoo's "
                                      "get_assert does")
    ports.reads = ["output"]
    for c in mapped + columns:
        if c != "output" and c not in ports.optional and evalgraph._plain(c):
            ports.optional.append(c)
    ports.writes, ports.calls_llm = ["pass", "score", "reason"], bool(decl and decl.get("calls_llm"))
    ports.outputs = {"pass": "bool", "score": "float", "reason": "str"}
    ports.engine_outputs = _engine_outputs({"pass": bool, "score": float, "reason": str}, ())
    ports.additional = True


def _keyword_param(ports, p, hints, given, mapped, at, fname, props):
    """One keyword parameter of an evalgraph-interface check: an input (a record field) or a parameter (with:)."""
    h = hints.get(p.name, p.annotation)
    has_default = p.default is not p.empty
    entry = {"name": p.name, "annotation": _hint_name(h)}
    if has_default:
        entry["default"] = _jsonable(p.default)
    if p.kind == p.POSITIONAL_ONLY:
        if not has_default:
            raise ScriptError("function", f"{at}: parameter '{p.name}' of '{fname}' is positional-only; "
                                          "the engine passes every value by keyword")
        return
    if p.name in mapped and p.name in given:
        raise ScriptError(p.name, f"'{p.name}' is both an input (inputs:) and a parameter (with:) of node "
                                  f"'{fname}'; give it in one place")
    if p.name in mapped or (p.kind == p.POSITIONAL_OR_KEYWORD and p.name not in given) \
            or p.name in RESERVED:
        entry["kind"] = "input"
        entry["required"] = not has_default
        (ports.optional if has_default else ports.reads).append(p.name)
    else:
        entry["kind"] = "parameter"
        if not has_default:
            ports.required.append(p.name)
    ports.described.append(entry)
    if entry["kind"] == "parameter" or (p.name not in RESERVED and p.name not in mapped):
        s = dict(_schema(h))
        if has_default:
            s["default"] = entry["default"]
        s["description"] = f"{'input or ' if entry['kind'] == 'input' else ''}keyword argument '{p.name}'" + \
                           (f" ({entry['annotation']})" if entry["annotation"] else "")
        if p.name not in RESERVED:
            props[p.name] = s


def _evalgraph_ports(ports, sig, hints, decl, given, mapped, at, fname, props):
    """interface: evalgraph: fn(**inputs, **with), declared by @evalgraph.node(outputs=...)."""
    if decl is None:
        raise ScriptError("function", f"{at}: '{fname}' has no declaration: put "
                                      "@evalgraph.node(outputs={...}) above it (or use interface: promptfoo)")
    var_kw = False
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            continue
        if p.kind == p.VAR_KEYWORD:
            var_kw = True
            continue
        _keyword_param(ports, p, hints, given, mapped, at, fname, props)
    if var_kw:
        for c in mapped:
            if c not in ports.reads and c not in ports.optional:
                ports.optional.append(c)
    ports.additional = var_kw
    try:
        ports.outputs = {k: _hint_name(v) if v is not None else "None" for k, v in decl["outputs"].items()}
        for k, v in decl["outputs"].items():
            kinds(v)
    except TypeError as e:
        raise ScriptError("function", f"{at}: @evalgraph.node of '{fname}': {e}") from None
    ports.writes, ports.calls_llm = list(decl["outputs"]), decl["calls_llm"]
    ports.engine_outputs = _engine_outputs(decl["outputs"], decl.get("lower_is_better", ()))


def _describe(params):
    path, shown, sha, fn, fname, sig, hints, line, interface = _resolve(params)
    given = {k for k in params if not k.startswith("_") and k not in RESERVED}
    mapped = [p for p in params.get("_inputs", [])]
    columns = [c for c in params.get("_columns", [])]
    decl = getattr(fn, "__evalgraph__", None)
    at = f"{shown}:{line}"
    props = {
        "file": {"type": "string", "minLength": 1, "description": "The script, relative to the pipeline."},
        "function": {"type": "string", "minLength": 1, "description": "The function of the script to call."},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "default": DEFAULT_TIMEOUT_S,
                      "description": "Longest one call may take; a call past it is interrupted and fails its record."},
        "interface": {"enum": ["evalgraph", "promptfoo"], "default": "evalgraph",
                      "description": "evalgraph: fn(**inputs, **with); promptfoo: get_assert(output, context)."},
    }
    ports = _Ports()
    if interface == "promptfoo":
        _promptfoo_ports(ports, sig, decl, mapped, columns, at, fname, props)
    else:
        _evalgraph_ports(ports, sig, hints, decl, given, mapped, at, fname, props)
    schema = {"type": "object", "properties": props, "additionalProperties": ports.additional}
    if ports.required:
        schema["required"] = ports.required
    doc = inspect.getdoc(fn)
    info = {"script": shown, "script_path": path, "sha256": sha, "function": fname, "line": line,
            "interface": interface, "signature": f"{fname}{sig}", "doc": doc, "params": ports.described,
            "outputs": ports.outputs,
            "lower_is_better": [k for k, d in ports.engine_outputs.items() if d.get("better") == "lower"],
            "calls_llm": ports.calls_llm,
            "timeout_s": params.get("timeout_s", DEFAULT_TIMEOUT_S), "python": sys.version.split()[0]}
    return {"reads": ports.reads, "reads_optional": ports.optional, "writes": ports.writes,
            "calls_llm": ports.calls_llm, "params_schema": schema, "outputs": ports.engine_outputs, "info": info}


def describe(params_json):
    """The plugin's describe(): JSON in, JSON out ({"errors": [...]} on a problem)."""
    try:
        return json.dumps(_describe(json.loads(params_json)))
    except ScriptError as e:
        return json.dumps({"errors": [{"param": e.param, "message": e.message}]})


def prepare(params_json):
    """The plugin's create(): the function to call and how (Prepared)."""
    params = json.loads(params_json)
    try:
        path, shown, sha, fn, fname, sig, hints, line, interface = _resolve(params)
    except ScriptError as e:
        raise ValueError(e.message) from None
    timeout = float(params.get("timeout_s", DEFAULT_TIMEOUT_S))
    fixed = {k: v for k, v in params.items() if not k.startswith("_") and k not in RESERVED}
    if inspect.iscoroutinefunction(fn):  # an `async def`: run to completion on the worker's event loop
        from evalgraph import _aio
        fn = _aio.sync(fn)
    if interface == "promptfoo":
        fixed.pop("threshold", None)
        return Prepared(fn, {}, None, interface, timeout, path, shown, params.get("threshold"), fixed)
    decl = getattr(fn, "__evalgraph__", None)
    if decl is None:
        raise ValueError(f"{shown}: '{fname}' has no @evalgraph.node(outputs=...) declaration")
    out_kinds = {k: kinds(v) for k, v in decl["outputs"].items()}
    return Prepared(fn, fixed, out_kinds, interface, timeout, path, shown, None, {})


def promptfoo_result(result, threshold):
    """get_assert's answer as the outputs pass, score, reason (promptfoo's rules: a bool passes or fails with
    score 1 or 0; a number is a score that passes above 0, or at least `threshold` when given; a dict gives
    pass / score / reason, a missing score being 1 or 0 by pass)."""
    if isinstance(result, bool):
        return {"pass": result, "score": 1.0 if result else 0.0, "reason": ""}
    if isinstance(result, (int, float)):
        score = float(result)
        ok = score >= threshold if threshold is not None else score > 0
        return {"pass": ok, "score": score, "reason": ""}
    if isinstance(result, dict):
        if "pass" not in result and "pass_" not in result:
            raise TypeError("get_assert returned a dict without 'pass' (promptfoo's GradingResult: "
                            "{'pass': bool, 'score': float, 'reason': str})")
        ok = result.get("pass", result.get("pass_"))
        if not isinstance(ok, bool):
            raise TypeError(f"get_assert's 'pass' must be True or False, not {type(ok).__name__}")
        score = result.get("score", 1.0 if ok else 0.0)
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise TypeError(f"get_assert's 'score' must be a number, not {type(score).__name__}")
        reason = result.get("reason", "")
        return {"pass": ok, "score": float(score), "reason": reason if isinstance(reason, str) else str(reason)}
    raise TypeError(f"get_assert must return a bool, a number or a dict {{'pass', 'score', 'reason'}}, "
                    f"not {type(result).__name__}")


def call_promptfoo(fn, output, vars_, config, threshold):
    context = {"vars": vars_, "prompt": vars_.get("prompt"), "test": {"vars": vars_}, "config": config}
    return promptfoo_result(fn(output, context), threshold)


class _LogStream:
    """sys.stdout / sys.stderr inside the engine: print() lines go to the run's log (run.log), attributed to
    the node and the record (stderr lines as warnings, which the terminal shows too)."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, level, name):
        self.level = level
        self.name = name

    def write(self, text):
        import _evalgraph_host
        return _evalgraph_host.write(self.level, str(text))

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def readable(self):
        return False

    def writable(self):
        return True


def install_streams():
    sys.stdout = _LogStream(1, "<evalgraph log>")
    sys.stderr = _LogStream(2, "<evalgraph log: warnings>")
