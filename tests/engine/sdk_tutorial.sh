#!/usr/bin/env bash
# The plugin tutorial in sdk/README.md, followed as a reader would, so that it cannot drift from the SDK:
# installs the engine into a prefix, takes the page's first ```cmake block as the CMakeLists.txt of a project
# of its own, saves the first complete ```cpp block (one with EVALGRAPH_PLUGIN) under the source file that block
# names and every further complete block as one more plugin of the project, builds it against the installed SDK
# with -Wall -Wextra -Werror, checks that the engine lists every node type the blocks declare, and runs the
# step-4 pipeline (the first ```yaml block) over a small data set: every record must get the node's output and
# no error.
# usage: sdk_tutorial.sh BUILD_DIR SOURCE_DIR WORK_DIR [CXX_COMPILER]
set -euo pipefail
build=$1 src=$2 work=$3 cxx=${4:-c++}
readme="$src/sdk/README.md"
rm -rf "$work" && mkdir -p "$work/proj"
fail() { echo "FAIL: $*"; exit 1; }

# Fenced blocks of one language, each written to $work/blocks/<lang>.<n> (n from 1).
mkdir -p "$work/blocks"
awk -v dir="$work/blocks" '
  /^```[a-z]+[ \t]*$/ && !inblock { lang = substr($0, 4); gsub(/[ \t]/, "", lang); n[lang]++; f = dir "/" lang "." n[lang]; inblock = 1; printf "" > f; next }
  /^```[ \t]*$/ && inblock { inblock = 0; close(f); next }
  inblock { print >> f }' "$readme"

cmake_block="$work/blocks/cmake.1"
[ -s "$cmake_block" ] || fail "sdk/README.md has no \`\`\`cmake block (step 3)"
yaml_block="$work/blocks/yaml.1"
[ -s "$yaml_block" ] || fail "sdk/README.md has no \`\`\`yaml block (step 4)"
# The source file the tutorial's CMake line builds: evalgraph_add_plugin(<target> SOURCES <file>)
source_name=$(grep -o 'SOURCES[[:space:]]\+[^ )]*' "$cmake_block" | head -n1 | awk '{print $2}')
[ -n "$source_name" ] || fail "the \`\`\`cmake block names no SOURCES file"

cp "$cmake_block" "$work/proj/CMakeLists.txt"
complete=0
types=()
for block in $(ls "$work"/blocks/cpp.* 2>/dev/null | sort -t. -k2 -n); do
  grep -q 'EVALGRAPH_PLUGIN' "$block" || continue   # a fragment (e.g. one method), not a whole plugin
  complete=$((complete + 1))
  if [ "$complete" -eq 1 ]; then
    cp "$block" "$work/proj/$source_name"
  else
    cp "$block" "$work/proj/tutorial_$complete.cpp"
    echo "evalgraph_add_plugin(tutorial_$complete SOURCES tutorial_$complete.cpp)" >> "$work/proj/CMakeLists.txt"
  fi
  # node type names: quoted "<prefix>.<name>" strings (acme.shouting, index.length_ratio)
  while read -r t; do types+=("$t"); done < <(grep -o '"[a-z][a-z0-9_]*\.[a-z][a-z0-9_.]*"' "$block" | tr -d '"' | sort -u)
done
[ "$complete" -ge 1 ] || fail "sdk/README.md has no complete \`\`\`cpp block (one with EVALGRAPH_PLUGIN)"
[ "${#types[@]}" -ge 1 ] || fail "no node type name found in the tutorial's code"
echo "tutorial: $complete plugin source(s), node types: ${types[*]}, step-3 source file: $source_name"

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$work/proj" -B "$work/proj/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/proj/build" || fail "the tutorial's code does not build against the SDK (sdk/README.md)"

engine="$work/prefix/bin/evalgraph"
listing=$("$engine" plugins --plugin-dir "$work/proj/build" 2>&1)
for t in "${types[@]}"; do
  grep -q -- "$t" <<<"$listing" || { echo "$listing"; fail "node type $t is not listed by evalgraph plugins"; }
done
grep -qi 'refus' <<<"$listing" && { echo "$listing"; fail "a tutorial plugin was refused"; }

# Step 4: the tutorial's pipeline over a small data set with the columns its inputs name.
cp "$yaml_block" "$work/pipeline.yaml"
node_id=$(grep -m1 -o 'id:[[:space:]]*[A-Za-z0-9_]*' "$yaml_block" | awk '{print $2}')
[ -n "$node_id" ] || fail "the step-4 pipeline has no node id"
column=$(grep -m1 -o 'inputs:[[:space:]]*{[^}]*}' "$yaml_block" | sed 's/.*: *\([A-Za-z0-9_]*\) *}/\1/')
[ -n "$column" ] || fail "the step-4 pipeline maps no input column"
printf '%s\n"HELLO there, WORLD"\nquiet words\n' "$column" > "$work/data.csv"
run_dir=$(cd "$work" && CI=true "$engine" run -q --plugin-dir "$work/proj/build" -o "$work/out" pipeline.yaml) \
  || fail "the step-4 pipeline did not run (exit $?)"
out=$(cat "$run_dir"/*.jsonl)
echo "$out"
[ "$(grep -c "\"$node_id\":{" <<<"$out")" -eq 2 ] || fail "not every record has the output of node '$node_id'"
grep -q '"_errors"' <<<"$out" && fail "a record has errors"
echo "PASS: the tutorial in sdk/README.md builds, loads and runs"
