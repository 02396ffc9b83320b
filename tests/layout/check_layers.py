#!/usr/bin/python3
"""The layers of the source tree, checked from the #include lines (README.md "Layout: where things go").

  lib/       includes only lib/ and the SDK (util/ not even llm/);
  engine/    includes nothing from frontends/ or cli/, and its rooms (engine/<room>/) include each other
             without a cycle, so each room can be read knowing only the rooms below it;
  plugins/   include no engine or lib header (only the SDK and their own files).

Prints every violation with file:line and exits 1; exits 0 when the tree is clean. Usage: check_layers.py REPO
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = ("*.h", "*.hpp", "*.cpp", "*.c")


def includes(folder):
    for pattern in SOURCES:
        for f in sorted(folder.rglob(pattern)):
            for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if m:
                    yield f, n, m.group(1)


def main(repo):
    repo = pathlib.Path(repo)
    bad = []
    lib_dirs = {p.name for p in (repo / "lib").iterdir() if p.is_dir()}
    rooms = {p.name for p in (repo / "engine").iterdir() if p.is_dir()}
    top = lambda inc: inc.split("/", 1)[0] if "/" in inc else ""

    for f, n, inc in includes(repo / "lib"):
        own = f.relative_to(repo / "lib").parts[0]
        allowed = {"util", "evalgraph", own} | ({"llm"} if own == "llm" else set())
        if top(inc) not in allowed and not (f.parent / inc).exists():
            bad.append(f"{f.relative_to(repo)}:{n}: lib/{own} includes \"{inc}\"; lib/ sits below the engine "
                       "(lib/util below lib/llm) and may include only what is below it")

    graph = {r: {} for r in rooms}
    for f, n, inc in includes(repo / "engine"):
        room = f.relative_to(repo / "engine").parts[0]
        t = top(inc)
        if t in ("frontends", "cli", "chatbot_config"):
            bad.append(f"{f.relative_to(repo)}:{n}: the engine includes \"{inc}\" from a layer above it")
        if t in rooms and t != room and room in graph:
            graph[room].setdefault(t, f"{f.relative_to(repo)}:{n}")

    # A cycle among the rooms: depth-first search, reporting the include that closes it.
    state = {}

    def visit(room, path):
        state[room] = "open"
        for dep, where in sorted(graph.get(room, {}).items()):
            if state.get(dep) == "open":
                cycle = path[path.index(dep):] + [dep]
                bad.append(f"{where}: the engine's rooms include each other in a cycle: {' -> '.join(cycle)}; "
                           "move what both need into the lower room (or a room of its own)")
            elif dep not in state:
                visit(dep, path + [dep])
        state[room] = "done"

    for room in sorted(graph):
        if room not in state:
            visit(room, [room])

    engine_only = (rooms | lib_dirs) - {"evalgraph"}
    for f, n, inc in includes(repo / "plugins"):
        if top(inc) in engine_only and not (f.parent / inc).exists() and not any(
                (d / inc).exists() for d in f.parents if d.is_relative_to(repo / "plugins")):
            bad.append(f"{f.relative_to(repo)}:{n}: a plugin includes \"{inc}\", an engine or lib header; plugins "
                       "use the SDK only (a third party has nothing else)")

    for line in bad:
        print(line)
    print(f"check_layers: {len(bad)} problem(s)" if bad else "check_layers: lib/ below engine/, engine rooms acyclic, "
          "plugins on the SDK only")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
