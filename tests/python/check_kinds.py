"""The python node's kinds of JSON value are bits on both sides: enum Kind in plugins/operators/python/interpreter.h
(the plugin checks outputs with them) and K_* in evalgraph/_runtime.py (kinds() declares them). This holds the two
equal, and the names json_python.cpp gives the bits in messages in the same order.
usage: check_kinds.py REPO_DIR PYTHON_PACKAGE_DIR   (exit 0: in sync; 1: what differs, printed)"""
import re
import sys

repo, package = sys.argv[1], sys.argv[2]
sys.path.insert(0, package)
import evalgraph._runtime as runtime  # noqa: E402  (a plain import: _runtime needs no engine to load)

node = repo + "/plugins/operators/python/"
header = open(node + "interpreter.h", encoding="utf-8").read()
enum = re.search(r"enum Kind : unsigned \{([^}]*)\}", header)
cpp = {name: int(value) for name, value in re.findall(r"(K_[A-Z]+)\s*=\s*(\d+)", enum.group(1))} if enum else {}
py = {name: getattr(runtime, name) for name in dir(runtime) if re.fullmatch(r"K_[A-Z]+", name) and name != "K_ANY"}

problems = []
if not cpp:
    problems.append("interpreter.h: no `enum Kind : unsigned { K_... = ... }` found")
if cpp != py:
    problems.append(f"interpreter.h's Kind {cpp} != _runtime.py's K_* {py}")
if runtime.K_ANY != sum(py.values()):
    problems.append(f"_runtime.py: K_ANY = {runtime.K_ANY}, the bits together are {sum(py.values())}")
# The words of kind_name(), one per bit from the lowest: None bool int float str list dict.
words = re.search(r"const char \*words\[\] = \{([^}]*)\}", open(node + "json_python.cpp", encoding="utf-8").read())
expected = {"K_NULL": "None", "K_BOOL": "bool", "K_INT": "int", "K_FLOAT": "float", "K_STR": "str", "K_LIST": "list",
            "K_DICT": "dict"}
if words is None:
    problems.append("json_python.cpp: the words of kind_name() not found")
else:
    names = re.findall(r'"([^"]*)"', words.group(1))
    by_bit = {value.bit_length() - 1: name for name, value in cpp.items()}
    for bit, word in enumerate(names):
        if expected.get(by_bit.get(bit)) != word:
            problems.append(f"json_python.cpp: kind_name's word for bit {bit} is '{word}', the bit is {by_bit.get(bit)}")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
