// Plugin glue of ksodi.o0: parameters, ports, JSON in/out. The computation is in o0.cpp.
#include "evalgraph/plugin.hpp"
#include "ksodi/detect.hpp"
#include "ksodi/json_input.hpp"
#include "ksodi/plugin_util.hpp"
#include "ksodi/text.hpp"
#include "o0.hpp"

namespace {

using evalgraph::json;

constexpr const char *kSchema = R"schema({
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "alpha": {"type": "number", "minimum": 0, "maximum": 10, "description": "Weight of retrieval alignment A_ret (seed: 0.6)"},
    "beta": {"type": "number", "minimum": 0, "maximum": 10, "description": "Weight of traceability T (seed: 0.2)"},
    "gamma": {"type": "number", "minimum": 0, "maximum": 10, "description": "Weight of the unsupported-claim penalty U (seed: 0.2)"},
    "tau": {"type": "number", "minimum": 0, "maximum": 1, "description": "A sentence is unsupported when its best doc cosine is below tau and it has no attribution marker (seed: 0.35)"},
    "include_tool_outputs": {"type": "boolean", "description": "Treat tool outputs (port tool_outputs) as extra docs (default true)"},
    "doc_sentences": {"type": "boolean", "description": "U alignment: max over whole docs AND each doc's sentences (default true); false = whole docs only, as in the seed"},
    "embedding_provider": {"type": ["string", "null"], "description": "Embedding provider of the pipeline; null = host default (offline TF-IDF)"},
    "sentence_text_max": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Bytes of each sentence's text kept in the audit list (default 200; 0 = offsets only)"}
  }
})schema";

class O0Node : public evalgraph::Node {
 public:
  O0Node(const evalgraph::Host &host, const json &params) : host_(host) {
    p_.alpha = ksodi::param_num(params, "alpha", 0.6, 0, 10);
    p_.beta = ksodi::param_num(params, "beta", 0.2, 0, 10);
    p_.gamma = ksodi::param_num(params, "gamma", 0.2, 0, 10);
    p_.tau = ksodi::param_num(params, "tau", 0.35, 0, 1);
    p_.include_tool_outputs = ksodi::param_bool(params, "include_tool_outputs", true);
    p_.doc_sentences = ksodi::param_bool(params, "doc_sentences", true);
    provider_ = ksodi::param_provider(params);
    text_max_ = static_cast<std::size_t>(ksodi::param_num(params, "sentence_text_max", 200, 0, 100000));
  }

  json process(evalgraph::Call &call, const json &in) override {
    auto ans = in.find("answer");
    if (ans == in.end() || !(ans->is_string() || ans->is_null()))
      throw evalgraph::InputError("ksodi.o0: port 'answer' must be a string (the assistant text)");
    ksodi::O0Input x;
    x.answer = ksodi::text_of(in, "answer");
    try {
      x.docs = ksodi::parse_docs(in, "retrieved_docs", "doc_");
      x.tool_outputs = ksodi::parse_docs(in, "tool_outputs", "tool_");
    } catch (const std::invalid_argument &e) {
      throw evalgraph::InputError(std::string("ksodi.o0: ") + e.what());
    }
    ksodi::O0Result r = ksodi::compute_o0(x, p_, ksodi::host_embedder(host_, call, provider_));

    auto opt = [&](double v) { return r.computed ? json(v) : json(nullptr); };
    json out;
    out["O0"] = opt(r.O0);
    out["A_ret"] = opt(r.A_ret);
    out["T"] = r.T;
    out["U"] = opt(r.U);
    out["computed"] = r.computed;
    out["flags"] = r.computed ? json::array() : json::array({"no_retrieved_docs"});
    out["n_sent"] = r.n_sent;
    out["n_attrib"] = r.n_attrib;
    out["n_unsupported"] = r.n_unsupported;
    json ret_ids = json::array(), tool_ids = json::array();
    for (std::size_t i = 0; i < r.doc_ids.size(); ++i) (r.doc_kinds[i] == "retrieved" ? ret_ids : tool_ids).push_back(r.doc_ids[i]);
    out["retrieval_doc_ids"] = ret_ids;
    out["tool_output_ids"] = tool_ids;
    out["doc_alignment"] = r.doc_alignment;
    out["best_doc_id"] = r.best_doc >= 0 ? json(r.doc_ids[static_cast<std::size_t>(r.best_doc)]) : json(nullptr);
    out["empty_docs_skipped"] = r.empty_docs_skipped;
    out["marker_kinds"] = r.marker_kinds;
    json sents = json::array();
    for (const auto &s : r.sentences) {
      json j = {{"start", s.start}, {"length", s.length}, {"markers", s.markers}, {"attrib", s.markers > 0}};
      if (text_max_ > 0) j["text"] = std::string(ksodi::text::utf8_prefix(std::string_view(x.answer).substr(s.start, s.length), text_max_));
      j["align"] = r.computed ? json(s.align) : json(nullptr);
      j["best_doc_id"] = s.best_doc >= 0 ? json(r.doc_ids[static_cast<std::size_t>(s.best_doc)]) : json(nullptr);
      j["unsupported"] = r.computed ? json(s.unsupported) : json(nullptr);
      sents.push_back(std::move(j));
    }
    out["sentences"] = std::move(sents);
    out["embedding_model_id"] = r.embedding_model_id.empty() ? json(nullptr) : json(r.embedding_model_id);
    out["tau"] = p_.tau;
    out["weights"] = {{"alpha", p_.alpha}, {"beta", p_.beta}, {"gamma", p_.gamma}};
    out["parameters"] = {{"alpha", p_.alpha},
                         {"beta", p_.beta},
                         {"gamma", p_.gamma},
                         {"tau", p_.tau},
                         {"include_tool_outputs", p_.include_tool_outputs},
                         {"doc_sentences", p_.doc_sentences},
                         {"embedding_provider", provider_ ? json(*provider_) : json(nullptr)},
                         {"embedding_model_id", out["embedding_model_id"]},
                         {"detector_version", ksodi::detect::kDetectorVersion}};
    return out;
  }

 private:
  evalgraph::Host host_;
  ksodi::O0Params p_;
  std::optional<std::string> provider_;
  std::size_t text_max_ = 200;
};

}  // namespace

EVALGRAPH_PLUGIN("ksodi_o0", "1.0.0", "KSODI-Standard O0: grounding relative to retrieval",
                 evalgraph::node_type<O0Node>({EG_KIND_OPERATOR, "ksodi.o0",
                                               "KSODI O0: retrieval alignment, traceability and unsupported sentences",
                                               kSchema, {"answer"}, {"retrieved_docs", "tool_outputs"},
                                               {"O0", "A_ret", "T", "U", "computed", "flags", "n_sent", "n_attrib",
                                                "n_unsupported", "retrieval_doc_ids", "tool_output_ids", "doc_alignment",
                                                "best_doc_id", "empty_docs_skipped", "marker_kinds", "sentences",
                                                "embedding_model_id", "tau", "weights", "parameters"},
                                               EG_FLAG_THREAD_SAFE | EG_FLAG_USES_EMBEDDINGS}))
