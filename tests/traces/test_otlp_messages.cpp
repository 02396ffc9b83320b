// Messages written as a JSON string are read from their text (engine/io/otlp_message_text.cpp) into exactly
// what the DOM path gives (the string parsed, each object read by message_from_json), for every shape: the
// usual ones, the ones left to the DOM, duplicate and escaped keys, text that is no JSON, and random mixes.
#include <catch2/catch.hpp>
#include <random>

#include "io/otlp_internal.h"
#include "util/json_build.h"

namespace otlp = evalgraph::io::otlp;
using nlohmann::json;

namespace {

// The messages as text ("throw: ..." when reading throws), by the path under test or by the DOM.
std::string read_messages(const std::string &text, bool dom) {
  try {
    std::vector<otlp::Msg> msgs;
    if (!dom) {
      msgs = otlp::json_messages(json(text));
    } else if (json parsed = otlp::maybe_parsed(json(text)); parsed.is_array()) {
      for (const auto &m : parsed)
        if (m.is_object()) msgs.push_back(otlp::message_from_json(m));
    }
    json out = json::array();
    for (const auto &m : msgs)
      out.push_back({m.role, m.content, m.tool_call_id, m.name, m.finish_reason, m.tool_calls});
    return out.dump();
  } catch (const std::exception &e) {
    return std::string("throw: ") + e.what();
  }
}

const std::vector<std::string> kShapes = {
    R"({"role":"user","parts":[{"type":"text","content":"hi"}]})",
    R"({"role":"user","role":"system","content":"dup"})",
    R"({"role":"user","role":5,"content":"dup2"})",
    R"({"ro\u006ce":"user","content":"escaped key"})",
    R"({"role":"user","content":"[{\"type\":\"text\",\"text\":\"inner\"}]"})",
    R"({"role":"user","content":" {\"a\":1}"})",
    R"({"role":"user","content":"[broken"})",
    R"({"role":"user","content":null})",
    R"({"role":"user","content":42})",
    R"({"content":[{"type":"text","text":"a"},{"type":"image"},"s",{"type":"output_text","content":"b"}]})",
    R"({"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":{"ok":true}}]})",
    R"({"role":"tool","parts":[{"type":"tool_call_response","id":"c1","result":"done"}]})",
    R"({"parts":[{"type":"tool_call","id":"c1","name":"f","arguments":{"a":[1,2.50,-0,1e3]}}]})",
    R"({"parts":[{"type":"tool_call","name":"g","arguments":"{\"q\":1}"},{"type":"tool_call","id":"c3"}]})",
    R"({"parts":[{"type":"text"},{"type":"text","content":null},{"type":"text","content":"[1]"},5]})",
    R"({"parts":[{"type":"text","content":7},{"type":"reasoning","content":"r"},{"type":"text","type":"x"}]})",
    R"({"tool_calls":[{"id":"t1","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"t2","name":"g"},7]})",
    R"({"tool_calls":{"not":"array"},"parts":"nope"})",
    R"({"role":"\u00e9\ud83d\ude00\n\"","name":"n","tool_call_id":"t","finish_reason":"stop","content":"\u0000"})",
    R"({"parts":[{"t\u0079pe":"text","content":"escaped key in a part"}]})",
    R"({"parts":[{"type":5,"content":"x"}]})",
    R"({"parts":[{"type":"tool_call","id":5,"name":"f"}]})",
    R"({"parts":[{"type":null}]})",
    R"(3)",
    R"("x")",
    R"(null)",
};

}  // namespace

TEST_CASE("traces: messages read from their text are those the DOM gives", "[traces]") {
  for (const auto &shape : kShapes) {
    const std::string text = "[" + shape + "]";
    INFO(text);
    CHECK(read_messages(text, false) == read_messages(text, true));
  }
  for (const std::string text : {"  [ ] ", "[", "[{}] x", "{\"role\":\"user\"}", "plain", "", "[[[]]]"}) {
    INFO(text);
    CHECK(read_messages(text, false) == read_messages(text, true));
  }
  const std::string deep = "[{\"a\":" + std::string(600, '[') + std::string(600, ']') + ",\"role\":\"user\"}]";
  CHECK(read_messages(deep, false) == read_messages(deep, true));
  CHECK(read_messages(deep, false) == "[]");  // deeper than the strict check allows: no messages, as before
}

TEST_CASE("traces: random mixes of message shapes read as the DOM reads them", "[traces]") {
  std::mt19937 rng(38);
  for (int round = 0; round < 500; ++round) {
    std::string text = " [";
    const int n = static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) text += (i > 0 ? "," : "") + kShapes[rng() % kShapes.size()];
    text += "] ";
    INFO(text);
    CHECK(read_messages(text, false) == read_messages(text, true));
  }
}
