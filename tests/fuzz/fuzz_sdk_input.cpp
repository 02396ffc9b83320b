// fuzz_sdk_input: the input object the host hands a plugin's process(), as the plugins read it.
//  1. The SDK's input reader (sdk/include/evalgraph/input.hpp: evalgraph::Record, the one reader every plugin
//     that reads its input without a DOM uses) against a full nlohmann parse as the oracle: it accepts exactly
//     the objects the full parse accepts (within kMaxInputDepth), gives the same values, and reads the same
//     documents from every shape (arrays of {id, text}, of strings, JSON arrays held in strings) or refuses the
//     same ones.
//  2. process() of a bundled node that needs no LLM (operators and indices, picked by the input's length),
//     created with default parameters: an answer must be JSON, and nothing may crash.
#include "evalgraph/input.hpp"
#include "evalgraph/plugin.h"
#include "exec/host.h"
#include "fuzz_support.h"

#include <optional>

namespace {

using nlohmann::json;

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

bool same_docs(const std::vector<evalgraph::Doc> &a, const std::vector<evalgraph::Doc> &b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].id != b[i].id || a[i].text != b[i].text) return false;
  return true;
}

// The oracle: the docs of `field` read from a full parse, by the rules Record::docs() documents.
std::vector<evalgraph::Doc> oracle_docs(const json &in, const char *field, int max_depth) {
  std::vector<evalgraph::Doc> out;
  auto it = in.find(field);
  if (it == in.end() || it->is_null()) return out;
  json parsed;
  const json *v = &*it;
  if (v->is_string()) {
    const std::string &s = v->get_ref<const std::string &>();
    const std::size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return out;
    if (s[b] != '[') throw std::invalid_argument("a plain string");
    if (!evalgraph::parse_bounded(s, parsed, max_depth)) throw std::invalid_argument("not JSON");
    v = &parsed;
  }
  if (!v->is_array()) throw std::invalid_argument("not an array");
  std::size_t i = 0;
  for (const auto &e : *v) {
    evalgraph::Doc d;
    d.id = "doc_" + std::to_string(++i);
    if (e.is_string()) {
      d.text = e.get<std::string>();
    } else if (e.is_object()) {
      bool found = false;
      for (const char *k : {"text", "content", "page_content", "output", "result"}) {
        auto t = e.find(k);
        if (t == e.end() || t->is_null()) continue;
        d.text = t->is_string() ? t->get<std::string>() : t->dump();
        found = true;
        break;
      }
      if (!found) throw std::invalid_argument("no text");
      for (const char *k : {"id", "doc_id", "name", "tool", "source"}) {
        auto t = e.find(k);
        if (t == e.end() || t->is_null()) continue;
        d.id = t->is_string() ? t->get<std::string>() : t->dump();
        break;
      }
    } else {
      throw std::invalid_argument("not an object or a string");
    }
    out.push_back(std::move(d));
  }
  return out;
}

void differential(const std::string &s) {
  static const char *const keys[] = {"answer", "retrieved_docs", "tool_outputs", "system_prompt", "user_text"};
  json j;
  const bool parsed = evalgraph::parse_bounded(s, j, evalgraph::kMaxInputDepth) && j.is_object();
  std::optional<evalgraph::Record> rec;
  try {
    rec.emplace(s, "fuzz", std::initializer_list<const char *>{keys[0], keys[1], keys[2], keys[3], keys[4]});
  } catch (const evalgraph::InputError &) {
  }
  // nlohmann skips a byte order mark at the start; the host never sends one, and the reader refuses it.
  const bool bom = s.size() >= 3 && s.compare(0, 3, "\xEF\xBB\xBF") == 0;
  if (rec.has_value() != parsed && !bom)
    fuzz::fail(parsed ? "the reader refused an object the full parser accepts" : "the reader accepted what the full parser refuses", s);
  if (!rec || !parsed) return;
  for (std::size_t i = 0; i < 5; ++i) {
    const auto it = j.find(keys[i]);
    const evalgraph::input::Value &x = (*rec)[i];
    if ((x.kind == evalgraph::input::Value::Absent) != (it == j.end())) fuzz::fail("reader/full differ on presence", keys[i]);
    if (it == j.end()) continue;
    if (x.type_name() != std::string(it->type_name())) fuzz::fail("reader/full differ on the type", keys[i]);
    if (x.is_string() && it->get_ref<const std::string &>() != x.str()) fuzz::fail("reader/full decode a string differently", keys[i]);
    const std::string full_text = it->is_null() ? std::string() : it->is_string() ? it->get<std::string>() : it->dump();
    if (rec->text(i) != full_text) fuzz::fail("reader/full text differ", keys[i]);
    if (rec->json(i) != *it) fuzz::fail("reader/full values differ", keys[i]);
  }
  for (std::size_t i : {1u, 2u}) {
    for (int depth : {evalgraph::kDefaultNestingDepth, 2}) {
      std::vector<evalgraph::Doc> mine, full;
      bool mine_ok = true, full_ok = true;
      try {
        mine = rec->docs(i, "doc_", depth);
      } catch (const evalgraph::InputError &) {
        mine_ok = false;
      }
      try {
        full = oracle_docs(j, keys[i], depth);
      } catch (const std::invalid_argument &) {
        full_ok = false;
      }
      if (mine_ok != full_ok) fuzz::fail(mine_ok ? "docs: the reader accepted what the oracle refuses" : "docs: the reader refused what the oracle accepts", keys[i]);
      if (mine_ok && !same_docs(mine, full)) fuzz::fail("reader/oracle documents differ", keys[i]);
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
