// Plugin glue of ksodi.k0: parameters, ports, JSON in/out. The computation is in k0.cpp.
#include "evalgraph/plugin.hpp"
#include "k0_params.hpp"
#include "k0.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/fast_input.hpp"
#include "ksodi/json_input.hpp"
#include "ksodi/json_writer.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi/text.hpp"

namespace {

using evalgraph::json;


class K0Node : public evalgraph::RawNode {
 public:
  K0Node(const evalgraph::Host &, const json &params) {
    p_ = ksodi::resolve(ksodi::k0_params().parse(params), "weights");
    limits_ = ksodi::input_limits(params);
  }

  // Fast path: the members read straight from the input text; anything unusual takes the full parse.
  std::string process_raw(evalgraph::Call &, std::string_view input) override {
    thread_local std::vector<ksodi::fast::Value> v;
    thread_local std::vector<ksodi::Doc> docs;
    if (ksodi::fast::read_members(input, {"system_prompt", "tool_profile", "user_text", "retrieved_docs", "chunk_range",
                                          "context_scope_id", "system_prompt_id", "tool_profile_id"},
                                  v) &&
        ksodi::fast::read_docs(v[3], "doc_", docs)) {
      ksodi::K0Input x;
      x.system_prompt = ksodi::fast::text_of(v[0]);
      x.tool_profile = ksodi::fast::text_of(v[1]);
      x.user_text = ksodi::fast::text_of(v[2]);
      // kMeta[i] is input member 4 + i.
      return compute(x, docs, [&](std::size_t i, ksodi::JsonWriter &w) {
        const ksodi::fast::Value &m = v[4 + i];
        if (m.kind == ksodi::fast::Value::String) w.string(m.str());
        else if (m.kind == ksodi::fast::Value::Other) w.json(json::parse(m.raw));
        else w.null();
      });
    }
    return ksodi::process_parsed(input, [&](const json &in) { return process(in); });
  }

  std::string process(const json &in) const {
    ksodi::K0Input x;
    x.system_prompt = ksodi::text_of(in, "system_prompt");
    x.tool_profile = ksodi::text_of(in, "tool_profile");
    x.user_text = ksodi::text_of(in, "user_text");
    std::vector<ksodi::Doc> docs;
    try {
      docs = ksodi::parse_docs(in, "retrieved_docs", "doc_", limits_.nesting_depth);
    } catch (const std::invalid_argument &e) {
      throw evalgraph::InputError(std::string("ksodi.k0: ") + e.what());
    }
    return compute(x, docs, [&](std::size_t i, ksodi::JsonWriter &w) {
      const char *k = kMeta[i];
      if (in.contains(k) && !in[k].is_null()) w.json(in[k]);
      else w.null();
    });
  }

  // The output, written directly as the JSON text nlohmann would dump for it (members in sorted order; see
  // ksodi/json_writer.hpp). meta(i, w) writes the value of the pass-through member kMeta[i].
  template <class Meta> std::string compute(ksodi::K0Input &x, const std::vector<ksodi::Doc> &docs, Meta &&meta) const {
    for (const auto &d : docs) x.n_docs += ksodi::text::trim(d.text).empty() ? 0 : 1;
    ksodi::K0Result r = ksodi::compute_k0(x, p_);

    // The dimensions Z R D C E T in sorted (output) order: C D E R T Z.
    static constexpr std::size_t kSorted[] = {3, 2, 4, 1, 5, 0};
    std::string text;
    text.reserve(1024);
    ksodi::JsonWriter w(text);
    auto dims = [&](auto &&value) {
      w.begin_object();
      for (std::size_t i : kSorted) {
        w.key(ksodi::kK0Dims[i]);
        value(i);
      }
      w.end_object();
    };
    auto weights = [&] { dims([&](std::size_t i) { w.number(p_.weights[i]); }); };
    w.begin_object();
    w.member("K0", r.K0);
    w.key(kMeta[0]);  // chunk_range
    meta(0, w);
    w.key("context_evidence");
    dims([&](std::size_t i) { w.string(r.evidence[i]); });
    w.key("context_map");
    dims([&](std::size_t i) { w.boolean(r.present[i]); });
    w.key(kMeta[1]);  // context_scope_id
    meta(1, w);
    w.member("detector_version", ksodi::detect::kDetectorVersion);
    w.key("dimension_weights");
    weights();
    w.member("label", r.label);
    w.member("n_docs", x.n_docs);
    w.member("not_interpretable", r.not_interpretable);
    w.key("parameters");
    w.begin_object();
    w.member("detector_version", ksodi::detect::kDetectorVersion);
    w.key("dimension_weights");
    weights();
    w.member("interpretable_min", p_.interpretable_min);
    w.end_object();
    w.key(kMeta[2]);  // system_prompt_id
    meta(2, w);
    w.key(kMeta[3]);  // tool_profile_id
    meta(3, w);
    w.end_object();
    return text;
  }

  static constexpr const char *kMeta[] = {"chunk_range", "context_scope_id", "system_prompt_id", "tool_profile_id"};

 private:
  ksodi::K0Params p_;
  ksodi::InputLimits limits_;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_k0", "1.0.0", "KSODI-Standard K0: observable context completeness",
                 evalgraph::node_type<K0Node>({EG_KIND_OPERATOR, "ksodi.k0",
                                               "KSODI K0: which of the six context dimensions Z R D C E T the unit provides",
                                               ksodi::k0_params().schema(), {"user_text"},
                                               {"system_prompt", "tool_profile", "retrieved_docs", "context_scope_id",
                                                "chunk_range", "system_prompt_id", "tool_profile_id"},
                                               {"K0", "context_map", "context_evidence", "not_interpretable", "label",
                                                "n_docs", "context_scope_id", "chunk_range", "system_prompt_id",
                                                "tool_profile_id", "detector_version", "dimension_weights", "parameters"},
                                               EG_FLAG_THREAD_SAFE}))
