// Plugin glue of ksodi.k0: parameters, ports, JSON in/out. The computation is in k0.cpp.
#include "evalgraph/input.hpp"
#include "evalgraph/json_writer.hpp"
#include "evalgraph/plugin.hpp"
#include "k0_params.hpp"
#include "k0.hpp"
#include "ksodi/detect.hpp"
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

  std::string process_raw(evalgraph::Call &, std::string_view input) override {
    return evalgraph::for_each_record(input, "ksodi.k0", [&](std::string_view text) {
      const evalgraph::Record in(text, "ksodi.k0", {"system_prompt", "tool_profile", "user_text", "retrieved_docs", "chunk_range",
                                                    "context_scope_id", "system_prompt_id", "tool_profile_id"});
      ksodi::K0Input x;
      x.system_prompt = in.text(0);
      x.tool_profile = in.text(1);
      x.user_text = in.text(2);
      const std::vector<evalgraph::Doc> docs = in.docs(3, "doc_", limits_.nesting_depth);
      // kMeta[i] is input member 4 + i, passed through as it came (a string, or its JSON as nlohmann dumps it).
      return compute(x, docs, [&](std::size_t i, evalgraph::JsonWriter &w) {
        const evalgraph::input::Value &m = in[4 + i];
        if (m.is_string()) w.string(m.str());
        else if (m.absent_or_null()) w.null();
        else w.json(in.json(4 + i));
      });
    });
  }

  // The output, written by the SDK's builder (members in sorted order; evalgraph/json_writer.hpp). meta(i, w) writes the value of the pass-through member kMeta[i].
  template <class Meta> std::string compute(ksodi::K0Input &x, const std::vector<evalgraph::Doc> &docs, Meta &&meta) const {
    for (const auto &d : docs) x.n_docs += ksodi::text::trim(d.text).empty() ? 0 : 1;
    ksodi::K0Result r = ksodi::compute_k0(x, p_);

    // The dimensions Z R D C E T in sorted (output) order: C D E R T Z.
    static constexpr std::size_t kSorted[] = {3, 2, 4, 1, 5, 0};
    std::string text;
    text.reserve(1024);
    evalgraph::JsonWriter w(text);
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
