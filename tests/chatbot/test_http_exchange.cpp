// Unit tests of transform.http's request / answer mapping (plugins/transforms/http/exchange.hpp): the body
// template, the answer by JSON pointer and its errors, the statuses worth a retry.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include "exchange.hpp"

using namespace evalgraph_transforms;

TEST_CASE("transform.http: body template, answer by JSON pointer, transient statuses", "[chatbot][unit]") {
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
