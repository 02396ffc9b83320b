// fuzz_sdk_input: the input object the host hands a plugin's process(), as the plugins read it.
//  1. The KSODI operators' fast reader (plugins/operators/ksodi_text/include/ksodi/fast_input.hpp) against the
//     full parse it stands in for (json_input.hpp: text_of, parse_docs): whatever the fast path accepts, the
//     full parse must accept too and give the same values and documents (the header's promise).
//  2. process() of a bundled node that needs no LLM (operators and indices, picked by the input's length),
//     created with default parameters: an answer must be JSON, and nothing may crash.
#include "evalgraph/plugin.h"
#include "exec/host.h"
#include "fuzz_support.h"
#include "ksodi/fast_input.hpp"
#include "ksodi/json_input.hpp"

namespace {

using nlohmann::json;
namespace fast = ksodi::fast;

struct Node {
  const evalgraph::NodeTypeInfo *type;
  void *instance;
};

std::vector<Node> &nodes() {
  static std::vector<Node> *v = [] {
    static evalgraph::HostServices host(nullptr, "", "");
    host.set_min_stderr_level(EG_LOG_ERROR);
    auto *out = new std::vector<Node>;
    const std::string params =
        json{{"_pipeline_dir", std::string(EVALGRAPH_FUZZ_REPO_DIR) + "/pipelines"}}.dump();
    for (const auto &[name, t] : fuzz::registry().types()) {
      const auto kind = t.type->kind;
      if ((kind != EG_KIND_OPERATOR && kind != EG_KIND_INDEX) || t.has(EG_FLAG_USES_LLM)) continue;
      void *inst = nullptr;
      eg_buffer err{};
      if (t.type->create(host.table(), params.c_str(), &inst, &err) == EG_OK && inst != nullptr)
        out->push_back({&t, inst});
      (void)evalgraph::take_host_buffer(err);
    }
    if (out->empty()) fuzz::fail("no operator could be created");
    return out;
  }();
  return *v;
}

bool same_docs(const std::vector<ksodi::Doc> &a, const std::vector<ksodi::Doc> &b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].id != b[i].id || a[i].text != b[i].text) return false;
  return true;
}

void differential(const std::string &s) {
  static const char *const keys[] = {"answer", "retrieved_docs", "tool_outputs", "system_prompt", "user_text"};
  std::vector<fast::Value> v;
  const bool fast_ok = fast::read_members(s, {keys[0], keys[1], keys[2], keys[3], keys[4]}, v);
  json j = json::parse(s, nullptr, false);
  if (fast_ok && j.is_discarded()) {
    try {
      (void)json::parse(s);
    } catch (const json::out_of_range &e) {  // 1e999999: the fast reader does not range-check numbers
      fuzz::foreign_exception("sdk input: a number out of range", e);
      return;
    } catch (const std::exception &e) {
      fuzz::fail("the fast reader accepted an input the full parser refuses", e.what());
    }
  }
  if (fast_ok) {
    if (!j.is_object()) fuzz::fail("the fast reader accepted an input that is not an object", s);
    for (std::size_t i = 0; i < 5; ++i) {
      const auto it = j.find(keys[i]);
      const fast::Value &x = v[i];
      if ((x.kind == fast::Value::Absent) != (it == j.end())) fuzz::fail("fast/full differ on presence", keys[i]);
      if (it == j.end()) continue;
      if ((x.kind == fast::Value::Null) != it->is_null()) fuzz::fail("fast/full differ on null", keys[i]);
      if ((x.kind == fast::Value::String) != it->is_string()) fuzz::fail("fast/full differ on string", keys[i]);
      if (x.kind == fast::Value::String && it->get_ref<const std::string &>() != x.str())
        fuzz::fail("fast/full decode a string differently", keys[i]);
      if (fast::text_of(x) != ksodi::text_of(j, keys[i])) fuzz::fail("fast/full text_of differ", keys[i]);
    }
    for (std::size_t i : {1u, 2u}) {
      std::vector<ksodi::Doc> fd;
      if (!fast::read_docs(v[i], "doc_", fd)) continue;
      try {
        if (!same_docs(fd, ksodi::parse_docs(j, keys[i], "doc_"))) fuzz::fail("fast/full documents differ", keys[i]);
      } catch (const std::invalid_argument &e) {
        fuzz::fail("read_docs accepted what parse_docs refuses", e.what());
      }
    }
  }
  if (!j.is_discarded() && j.is_object()) {
    for (const char *k : {"retrieved_docs", "tool_outputs"}) {
      try {
        (void)ksodi::parse_docs(j, k, "doc_");
      } catch (const std::invalid_argument &) {
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  nodes();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string s(fuzz::view(data, size));
  differential(s);

  auto &ns = nodes();
  const Node &n = ns[size % ns.size()];
  eg_call call{};
  static const std::string node_id = "fuzz";
  call.node_id = &node_id;
  eg_buffer out{};
  eg_status st = EG_ERROR;
  try {
    st = n.type->type->process(n.instance, &call, s.data(), s.size(), &out);
  } catch (const std::exception &e) {  // the executor catches these too; still a plugin bug
    fuzz::foreign_exception("process() let an exception escape", e);
    return 0;
  }
  std::string result = evalgraph::take_host_buffer(out);
  if (st == EG_OK && !result.empty() && json::parse(result, nullptr, false).is_discarded())
    fuzz::fail("a node answered OK with output that is not JSON", n.type->name);
  return 0;
}
