// Unit tests of transform.http's request / answer mapping (plugins/transforms/transform_http/exchange.hpp): the body
// template, the answer by JSON pointer and its errors, the statuses worth a retry.
#include <catch2/catch.hpp>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include "exchange.hpp"
#include "node_run.h"

using namespace evalgraph_transforms;

TEST_CASE("transform.http: body template, answer by JSON pointer, transient statuses", "[chatbot][unit]") {
  using evalgraph_transforms::answer_text;  // not chatbot_judge's (test_units.cpp), in a unity build
  json body = render_json(json{{"messages", {{{"role", "user"}, {"content", "Say: {text}"}}}}, {"n", 1}}, {{"text", "hi"}});
  CHECK(body == json{{"messages", {{{"role", "user"}, {"content", "Say: hi"}}}}, {"n", 1}});
  json::json_pointer ptr("/choices/0/text");
  CHECK(answer_text(R"({"choices":[{"text":"  Hello. "}]})", ptr, "u") == "Hello.");
  CHECK(answer_text(R"({"choices":[{"text":42}]})", ptr, "u") == "42");
  CHECK_THROWS_AS(answer_text("not json", ptr, "u"), std::runtime_error);
  CHECK_THROWS_AS(answer_text(R"({"choices":[]})", ptr, "u"), std::runtime_error);
  CHECK_THROWS_AS(answer_text(R"({"choices":[{"text":"  "}]})", ptr, "u"), std::runtime_error);
  CHECK(transient_status(429));
  CHECK(transient_status(503));
  CHECK_FALSE(transient_status(404));
}

TEST_CASE("transform.http: the bearer token from its file, relative to the pipeline's folder", "[chatbot][unit]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("eg_http_token_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "key.txt") << "  s3cret\n";
  std::ofstream(dir / "blank.txt") << " \n";
  CHECK(read_token("key.txt", (dir).string()) == "s3cret");
  CHECK(read_token((dir / "key.txt").string(), json()) == "s3cret");
  CHECK_THROWS_WITH(read_token("blank.txt", dir.string()), "api_key_file " + (dir / "blank.txt").string() + " is empty");
  CHECK_THROWS_WITH(read_token("none.txt", dir.string()), "cannot read api_key_file " + (dir / "none.txt").string());
  std::filesystem::remove_all(dir);
}

namespace {
// The smallest chain node: the original, upper-cased (ASCII), for rows of transformation "up".
const evalgraph::NodeSpec kUpper{.kind = EG_KIND_TRANSFORM,
                                 .name = "test.upper",
                                 .reads = {"original"},
                                 .reads_optional = {"transformation", "previous"},
                                 .writes = {"text", "applies"},
                                 .params = evalgraph::no_params()};
struct Upper : ChainNode {
  Upper(const evalgraph::Host &, const evalgraph::NoParams &) : ChainNode(kUpper, std::string("up")) {}
  std::string transform(evalgraph::Call &, const evalgraph::Record &row) override {
    std::string t = original(row, original_);
    for (char &c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return t;
  }
  const evalgraph::Port original_ = kUpper.port("original");
};
}  // namespace

TEST_CASE("chain nodes: rows of their transformation transformed, others pass `previous` through", "[chatbot][unit]") {
  const eg_node_type t = evalgraph::node_type<Upper>(kUpper);
  const NodeRun run(t);
  CHECK(run(R"({"original": "ab\u00e9", "transformation": "up"})", EG_OK) == "{\"applies\":true,\"text\":\"ABé\"}");
  CHECK(run(R"({"original": "ab", "transformation": null})", EG_OK) == R"({"applies":true,"text":"AB"})");
  CHECK(run(R"({"original": "ab", "transformation": "down", "previous": "Ab."})", EG_OK) == R"({"applies":false,"text":"Ab."})");
  CHECK(run(R"([{"original": "x", "transformation": "down"}, {"original": "y"}])", EG_OK) == R"([{"applies":false},{"applies":true,"text":"Y"}])");
  CHECK(run(R"({"original": 5})", EG_INVALID_INPUT) == "test.upper: port 'original' must be a string, not number");
}
