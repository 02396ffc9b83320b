// transform.manual — an existing column holds the transformed text (e.g. a text improved by hand), so that
// hand-made and model-made transformations are measured the same way. Map the column to the `text` port.
#include <evalgraph/plugin.hpp>

#include "../chain.hpp"

namespace {

using evalgraph::json;
using namespace evalgraph_transforms;

struct Config {
  std::string column = "text";
  std::optional<std::string> transformation;
};
const evalgraph::Params<Config> kParams{"Takes the transformed text from an existing column (map it to the `text` port).", {
  evalgraph::param(&Config::column, "column", "The column's name, for messages only (the port mapping reads it)."),
  evalgraph::param(&Config::transformation, "transformation", "Apply only to rows whose transformation field is this id; other rows pass `previous` through (null: every row)."),
}};

class ManualTransform : public evalgraph::Node {
 public:
  ManualTransform(const evalgraph::Host &, const json &p) : c_(kParams.parse(p)) {}

  json process(evalgraph::Call &, const json &in) override {
    if (!applies(c_.transformation, in)) return pass_through(in);
    auto it = in.find("text");
    if (it == in.end() || it->is_null()) throw evalgraph::InputError("the row has no value in column '" + c_.column + "'");
    std::string text = it->is_string() ? it->get<std::string>() : it->dump();
    if (trim(text).empty()) throw evalgraph::InputError("column '" + c_.column + "' is empty in this row");
    return {{"text", text}, {"applies", true}};
  }

 private:
  const Config c_;
};

}  // namespace

EVALGRAPH_PLUGIN("transform_manual", "1.0.0", "Transformation taken from an existing column",
                 evalgraph::node_type<ManualTransform>({EG_KIND_TRANSFORM, "transform.manual",
                                                        "an existing column is the transformed text", kParams.schema(), {},
                                                        {"text", "transformation", "previous"}, {"text", "applies"},
                                                        EG_FLAG_THREAD_SAFE}))
