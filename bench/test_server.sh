# Sourced by the benches that need an LLM: the loopback test server (tests/llm/server, eg-test-llm-server).
#   start_test_server BIN DIR ARGS...   starts BIN ARGS..., logs in DIR/server.{out,err}; sets server_pid, url
#   stop_test_server                    stops it (call it from the bench's EXIT trap)
start_test_server() {
  local bin=$1 dir=$2
  shift 2
  stop_test_server
  "$bin" "$@" >"$dir/server.out" 2>"$dir/server.err" &
  server_pid=$!
  url=""
  for _ in $(seq 200); do
    url=$(sed -n 's/^listening on //p' "$dir/server.out")
    [ -n "$url" ] && break
    sleep 0.05
  done
  [ -n "$url" ] || { echo "test server did not start" >&2; cat "$dir/server.err" >&2; exit 1; }
}
stop_test_server() {
  if [ -n "${server_pid:-}" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
