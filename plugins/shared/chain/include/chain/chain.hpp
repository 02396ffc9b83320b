// Shared by the transform plugins (header-only, SDK only): the "chain" rule that lets one pipeline hold
// several transformations over a dataset whose rows name their transformation.
//
// A transform node may be bound to one transformation id (`with: {transformation: gpt_4_o}`). It reads the
// row's `transformation` field (optional port) and the text of the transform node before it in the chain
// (optional port `previous`). When the row belongs to its transformation it produces the text; otherwise it
// passes `previous` through unchanged (or writes nothing when there is none). The last node of the chain
// therefore holds the transformed text of every row, whichever transformation made it, and every row costs
// exactly one real transformation. Without `transformation` the node applies to every row.
#pragma once
#include <evalgraph/input.hpp>
#include <evalgraph/llm.hpp>
#include <evalgraph/plugin.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace evalgraph_transforms {

using evalgraph::json;

// The parameter every chain transform takes, declared once: its struct's `transformation` member as
// `transformation` (null: the node applies to every row).
template <class C> evalgraph::Param<C> transformation_param() {
  return evalgraph::param<C>(&C::transformation, "transformation",
                             "Apply only to rows whose transformation field is this id; other rows pass `previous` through (null: every row).");
}

// The node type of a chain transform: `spec` (its name, description, own ports, flags, parameters) as a
// transform that also reads the optional ports `transformation` and `previous` and writes `text` and `applies`.
inline evalgraph::NodeSpec chain_spec(evalgraph::NodeSpec spec) {
  spec.kind = EG_KIND_TRANSFORM;
  spec.reads_optional.insert(spec.reads_optional.end(), {"transformation", "previous"});
  spec.writes = {"text", "applies"};
  return spec;
}

// A transform node of the chain. It reads its row with an evalgraph::Record (no DOM) of the ports its spec
// declares, among them `transformation` and `previous`; a row of another transformation passes `previous`
// through, every other row gets transform()'s text.
class ChainNode : public evalgraph::RawNode {
 public:
  ChainNode(const evalgraph::NodeSpec &spec, std::optional<std::string> transformation)
      : spec_(spec), transformation_(std::move(transformation)) {}
  // The transformed text of a row this node applies to.
  virtual std::string transform(evalgraph::Call &call, const evalgraph::Record &row) = 0;

  std::string process_raw(evalgraph::Call &call, std::string_view input) final {
    return evalgraph::for_each_record(input, spec_.name, [&](std::string_view text) {
      const evalgraph::Record row(text, spec_);
      const evalgraph::input::Value &t = row[transformation_port_], &previous = row[previous_];
      json out = {{"applies", !transformation_ || t.absent_or_null() || t.text() == *transformation_}};
      if (out["applies"]) out["text"] = transform(call, row);
      else if (previous.is_string()) out["text"] = std::string(previous.str());
      return out.dump(-1, ' ', false, json::error_handler_t::replace);
    });
  }

 protected:
  // The row's text in `port` (its original); an InputError where it is not a string.
  std::string original(const evalgraph::Record &row, evalgraph::Port port) const {
    if (!row[port].is_string())
      throw evalgraph::InputError(std::string(spec_.name) + ": port '" + port.name + "' must be a string, not " +
                                  row[port].type_name());
    return std::string(row[port].str());
  }

 private:
  const evalgraph::NodeSpec &spec_;
  const evalgraph::Port transformation_port_ = spec_.port("transformation"), previous_ = spec_.port("previous");
  std::optional<std::string> transformation_;
};

inline constexpr auto &render = evalgraph::render_template;  // {name} placeholders (evalgraph/llm.hpp)

inline std::string trim(const std::string &s) {
  std::size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

}  // namespace evalgraph_transforms
