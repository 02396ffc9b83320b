// transform.manual — an existing column holds the transformed text (e.g. a text improved by hand), so that
// hand-made and model-made transformations are measured the same way. Map the column to the `text` port.
#include <evalgraph/plugin.hpp>

#include "chain/chain.hpp"

namespace {

using evalgraph::json;
using namespace evalgraph_transforms;

struct Config {
  std::string column = "text";
  std::optional<std::string> transformation;
};
const evalgraph::Params<Config> kParams{{
  evalgraph::param(&Config::column, "column", "The column's name, for messages only (the port mapping reads it)."),
  transformation_param<Config>(),
}};

const evalgraph::NodeSpec kSpec = chain_spec({
    .name = "transform.manual",
    .description = "an existing column is the transformed text",
    .reads_optional = {"text"},
    .flags = EG_FLAG_THREAD_SAFE,
    .params = kParams});

class ManualTransform : public ChainNode {
 public:
  ManualTransform(const evalgraph::Host &, const Config &c) : ChainNode(kSpec, c.transformation), column_(c.column) {}

  std::string transform(evalgraph::Call &, const evalgraph::Record &row) override {
    if (row[text_].absent_or_null()) throw evalgraph::InputError("the row has no value in column '" + column_ + "'");
    std::string text = row.text(text_);
    if (trim(text).empty()) throw evalgraph::InputError("column '" + column_ + "' is empty in this row");
    return text;
  }

 private:
  const std::string column_;
  const evalgraph::Port text_ = kSpec.port("text");
};

}  // namespace

EVALGRAPH_PLUGIN("transform_manual", "Transformation taken from an existing column",
                 evalgraph::node_type<ManualTransform>(kSpec))
