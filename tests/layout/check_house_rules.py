#!/usr/bin/python3
"""The house rules of the source tree (README.md "Layout: where things go"), checked from the text:

  lib/       includes only lib/ and the SDK (util/ not even llm/);
  cli/, frontends/  (above the engine) include of engine/ only its public door, engine/entry/;
  engine/    includes nothing from frontends/ or cli/, and its rooms (engine/<room>/) include each other
             without a cycle, so each room can be read knowing only the rooms below it;
  plugins/   include no engine or lib header (only the SDK and their own files);
             code several plugins share lives only in plugins/shared/<family>/: a plugin includes, links or
             points its include path at nothing of a sibling plugin (no "../", no other plugin's _core), and a
             folder plugins/<kind>/<name>/ is one plugin named after its node type ('.' written '_');
  the host   (engine/, lib/, cli/) calls a node type's create/process/finish/destroy only in
             engine/exec/node_runner.cpp, and names a bundled plugin's node type ("sink.csv", ...) only in
             engine/plugin/defaults.h: what it needs to know of a plugin comes from the plugin's declaration.

Prints every violation with file:line and exits 1; exits 0 when the tree is clean. Usage: check_house_rules.py REPO
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = ("*.h", "*.hpp", "*.cpp", "*.c")


def includes(folder):
    for f, n, line in lines(folder):
        m = INCLUDE.match(line)
        if m:
            yield f, n, m.group(1)


_text = {}  # each file is read once, whichever rules look at it


def lines(folder):
    for pattern in SOURCES:
        for f in sorted(folder.rglob(pattern)):
            if f not in _text:
                _text[f] = f.read_text(encoding="utf-8", errors="replace").splitlines()
            for n, line in enumerate(_text[f], 1):
                yield f, n, line


TYPE_NAME = re.compile(r'\.name\s*=\s*"([a-z0-9_]+(?:\.[a-z0-9_]+)*)"')
CORE_TARGET = re.compile(r"\b([A-Za-z0-9_]+_core)\b")
DEFINES_CORE = re.compile(r"(?:evalgraph_plugin_core|add_library)\(\s*([A-Za-z0-9_]+)")


def check_plugin_homes(repo, bad):
    """Shared plugin code only in plugins/shared/, no plugin reaching into a sibling, folder = node type."""
    plugins = repo / "plugins"
    where = lambda f, n: f"{f.relative_to(repo)}:{n}"
    for kind in sorted(d for d in plugins.iterdir() if d.is_dir()):
        for f in sorted(x for pattern in SOURCES for x in kind.glob(pattern)):
            bad.append(f"{f.relative_to(repo)}:1: a file between plugin folders; code several plugins share goes "
                       "in plugins/shared/<family>/ (a library made by evalgraph_shared_library)")
        if kind.name == "shared":
            continue
        for folder in sorted(d for d in kind.iterdir() if d.is_dir()):
            check_plugin_folder(repo, folder, bad, where)
    # Shared code stands below the plugins: it includes no plugin's files either.
    for f, n, inc in includes(plugins / "shared"):
        if inc.startswith("../") or "/../" in inc:
            bad.append(f"{where(f, n)}: shared plugin code includes \"{inc}\" by a relative path out of its folder; "
                       "include what another family offers by its include/ path")


def check_plugin_folder(repo, folder, bad, where):
    types = sorted({t for f, n, line in lines(folder) for t in TYPE_NAME.findall(line.split("//", 1)[0])})
    rel = folder.relative_to(repo)
    if not types:
        bad.append(f"{rel}/CMakeLists.txt:1: {rel} declares no node type (.name = \"...\"); a folder in "
                   f"plugins/<kind>/ is a plugin, shared code goes in plugins/shared/<family>/")
    for t in types:
        if t.replace(".", "_") != folder.name:
            bad.append(f"{rel}/CMakeLists.txt:1: the folder of node type '{t}' is named '{folder.name}'; name it "
                       f"'{t.replace('.', '_')}' (the node type, '.' written '_')")
    siblings = [d for kind in (repo / "plugins").iterdir() if kind.is_dir() and kind.name != "shared"
                for d in kind.iterdir() if d.is_dir() and d != folder]
    for f, n, inc in includes(folder):
        beside = f.parent / inc
        if beside.exists():
            if not beside.resolve().is_relative_to(folder.resolve()):
                bad.append(f"{where(f, n)}: a plugin includes \"{inc}\", a file outside its folder; shared code goes "
                           "in plugins/shared/<family>/ and is included by its include/ path")
            continue
        owner = next((d for d in siblings if (d / inc).exists()), None)
        if owner is not None and not (folder / inc).exists():
            bad.append(f"{where(f, n)}: a plugin includes \"{inc}\" from the sibling plugin "
                       f"{owner.relative_to(repo)}; move what both need to plugins/shared/<family>/")
    cmake = folder / "CMakeLists.txt"
    if cmake.exists():
        text = cmake.read_text(encoding="utf-8").splitlines()
        own_cores = {m for line in text for m in DEFINES_CORE.findall(line)}
        for n, line in enumerate(text, 1):
            code = line.split("#", 1)[0]
            if re.search(r"CMAKE_CURRENT_(SOURCE|LIST)_DIR\}?/\.\.", code) or "../" in code:
                bad.append(f"{where(cmake, n)}: a plugin's CMakeLists.txt reaches out of its folder; link a "
                           "plugins/shared/ library (eg_shared_<family>) instead")
            for core in CORE_TARGET.findall(code):
                if core not in own_cores and core != "evalgraph_plugin_core":
                    bad.append(f"{where(cmake, n)}: a plugin links {core}, another plugin's library; move what both "
                               "need to plugins/shared/<family>/")


def main(repo):
    repo = pathlib.Path(repo)
    bad = []
    lib_dirs = {p.name for p in (repo / "lib").iterdir() if p.is_dir()}
    rooms = {p.name for p in (repo / "engine").iterdir() if p.is_dir()}
    # What sits above the engine: the front ends and the CLI, by their folders (include roots) and their names.
    above = {"frontends", "cli"} | {p.name for top_dir in ("frontends", "cli") for p in (repo / top_dir).iterdir()
                                    if p.is_dir()}
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
        if t in above and not (repo / "engine" / inc).exists():  # (cli/agree beside the engine's room agree/)
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

    # Above the engine, the public door only: cli/ and frontends/ include of engine/ nothing but engine/entry/.
    for part in ("cli", "frontends"):
        for f, n, inc in includes(repo / part):
            own = any((d / inc).exists() for d in (f.parent, repo / "cli", repo / "frontends"))
            if top(inc) in rooms and top(inc) != "entry" and not own:
                bad.append(f"{f.relative_to(repo)}:{n}: {part}/ includes \"{inc}\", a room of the engine; above the "
                           "engine include only its public door, engine/entry/ (add what you need there)")

    engine_only = (rooms | lib_dirs) - {"evalgraph"}
    for f, n, inc in includes(repo / "plugins"):
        # (a plugin's own folder, or a plugin library above it, may have a folder of the same name)
        if top(inc) in engine_only and not any((d / inc).exists() for d in f.parents
                                               if d.is_relative_to(repo / "plugins")):
            bad.append(f"{f.relative_to(repo)}:{n}: a plugin includes \"{inc}\", an engine or lib header; plugins "
                       "use the SDK only (a third party has nothing else)")

    check_plugin_homes(repo, bad)

    abi_call = re.compile(r"->\s*(create|process|finish|destroy)\s*\(")
    node_runner = repo / "engine" / "exec" / "node_runner.cpp"
    defaults = repo / "engine" / "plugin" / "defaults.h"
    type_names = set()
    for f, n, line in lines(repo / "plugins"):
        type_names.update(re.findall(r'\.name\s*=\s*"([a-z0-9_]+(?:\.[a-z0-9_]+)+)"', line))
    for part in ("engine", "lib", "cli"):
        for f, n, line in lines(repo / part):
            code = line.split("//", 1)[0]
            if abi_call.search(code) and f != node_runner:
                bad.append(f"{f.relative_to(repo)}:{n}: a plugin ABI call outside engine/exec/node_runner.cpp; "
                           "call the node through NodeRunner")
            for name in re.findall(r'"([a-z0-9_]+(?:\.[a-z0-9_]+)+)"', code):
                if name in type_names and f != defaults:
                    bad.append(f"{f.relative_to(repo)}:{n}: the host names the node type \"{name}\"; take what you need "
                               "from the plugin's declaration or the pipeline (defaults: engine/plugin/defaults.h)")
    if not type_names:
        bad.append("plugins/: no node type declared as .name = \"kind.name\" found; the check would test nothing")

    for line in bad:
        print(line)
    print(f"check_house_rules: {len(bad)} problem(s)" if bad else "check_house_rules: lib/ below engine/, engine rooms acyclic, "
          "cli/ and frontends/ through engine/entry/ only, "
          f"plugins on the SDK only, shared plugin code in plugins/shared/, plugin folders named after their node types, ABI calls in node_runner.cpp, the {len(type_names)} bundled node type names only in defaults.h")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
