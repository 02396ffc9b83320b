#!/usr/bin/python3
"""check_house_rules.py must fail on a violation of each of its rules, naming the file and line: plants one
violation at a time in a copy of the tree (engine/ lib/ plugins/ cli/ frontends/ sdk/) and checks the verdict.
Usage: house_rules_plants.py REPO"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

CHECK = pathlib.Path(__file__).with_name("check_house_rules.py")

# (file to plant in, the line appended, what the message must say after "file:line: ")
PLANTS = [
    ("cli/main.cpp", '#include "exec/host.h"', 'cli/ includes "exec/host.h", a room of the engine'),
    ("frontends/chatbot_config/config.cpp", '#include "plugin/registry.h"', "a room of the engine"),
    ("lib/util/stop.cpp", '#include "exec/executor.h"', "lib/util includes"),
    ("plugins/sinks/sink_csv/plugin.cpp", '#include "exec/host.h"', "an engine or lib header"),
    ("engine/graph/plan.cpp", '#include "exec/executor.h"', "in a cycle"),
    ("engine/exec/executor.cpp", "void f(eg_node_type *t) { t->process(nullptr); }", "a plugin ABI call outside"),
    ("cli/commands.cpp", 'const char *k = "sink.csv";', 'names the node type "sink.csv"'),
]


def main(repo):
    repo = pathlib.Path(repo)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / "tree"
        for part in ("engine", "lib", "plugins", "cli", "frontends", "sdk"):
            shutil.copytree(repo / part, copy / part)
        clean = subprocess.run([sys.executable, CHECK, copy], capture_output=True, text=True)
        if clean.returncode != 0:
            print(f"the unplanted copy is not clean:\n{clean.stdout}")
            return 1
        for rel, line, says in PLANTS:
            f = copy / rel
            original = f.read_text(encoding="utf-8")
            n = len(original.splitlines()) + 1
            f.write_text(original + ("" if original.endswith("\n") else "\n") + line + "\n", encoding="utf-8")
            r = subprocess.run([sys.executable, CHECK, copy], capture_output=True, text=True)
            f.write_text(original, encoding="utf-8")
            hit = [x for x in r.stdout.splitlines() if says in x]
            named = [x for x in hit if x.startswith(f"{rel}:{n}:")]
            if r.returncode != 1 or not named:
                failures += 1
                print(f"FAIL: planting {line!r} in {rel}:{n}: exit {r.returncode}, wanted a line '{rel}:{n}: ...{says}...'"
                      f"\n{r.stdout}")
            else:
                print(f"ok: {named[0]}")
    print(f"house_rules_plants: {len(PLANTS) - failures} of {len(PLANTS)} planted violations caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
