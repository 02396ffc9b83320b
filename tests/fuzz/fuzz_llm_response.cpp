// fuzz_llm_response: what an OpenAI-compatible server answers, byte for byte. A loopback server in this
// process sends the input as the raw HTTP response (status line, headers, body); the engine's LLM client
// (lib/llm: libcurl callbacks, Retry-After, content type, body validation, error bodies) reads it through
// the host's eg_host.chat and eg_host.embed, as a plugin calls them; a chat answer then goes through the
// judges' and the compression plugins' readers (plugins/shared/judge/include/judge/verdict.hpp,
// compression::chat_content, parse_json_answer, parse_sections, parse_judgement).
#include <memory>

#include "compression/llm_util.hpp"
#include "compression/rubric.hpp"
#include "compression/summary.hpp"
#include "exec/host.h"
#include "fuzz_support.h"
#include "llm/llm_service.h"
#include "raw_http_server.h"
#include "judge/verdict.hpp"

namespace {

struct World {
  evalgraph::testing::RawHttpServer server;
  std::unique_ptr<evalgraph::HostServices> host;
  std::vector<std::string> criteria;
  World() {
    evalgraph::llm::ProviderConfig p;
    p.name = "fuzz";
    p.base_url = server.base_url();
    p.model = "fuzz-model";
    p.api_key = "sk-fuzz-secret-key";
    p.max_attempts = 1;  // every answer is final: no backoff sleeps
    p.max_malformed_attempts = 1;
    p.timeout_s = 5;
    p.connect_timeout_s = 2;
    evalgraph::llm::CacheOptions cache;
    cache.enabled = false;
    auto llm = std::make_shared<evalgraph::llm::LlmService>(std::vector<evalgraph::llm::ProviderConfig>{p}, cache);
    host = std::make_unique<evalgraph::HostServices>(llm, "fuzz", "fuzz");
    host->set_min_stderr_level(EG_LOG_ERROR);
    llm->set_logger([](evalgraph::llm::LogLevel, const std::string &) {});  // a line per failed call otherwise
    for (const auto &c : compression::criteria()) criteria.emplace_back(c.id);
  }
};

World &world() {
  static World *w = new World;
  return *w;
}

void read_answer(const std::string &response_text) {
  auto resp = nlohmann::json::parse(response_text, nullptr, false);
  if (resp.is_discarded()) fuzz::fail("the host handed a plugin a chat response that is not JSON", response_text);
  // The chatbot judges (judge.task_comparison, index.llm_hallucination).
  if (auto text = chatbot_judge::answer_text(resp)) {
    auto out = chatbot_judge::verdict_output(chatbot_judge::parse_verdict(*text), *text);
    (void)out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  // The compression plugins.
  std::string content;
  try {
    content = compression::chat_content(resp);
  } catch (const std::runtime_error &) {
    return;
  }
  (void)compression::parse_json_answer(content);
  if (auto s = compression::parse_sections(content)) (void)compression::sections_to_json(*s);
  auto j = compression::parse_judgement(content, world().criteria, {});
  (void)j.criterion_results.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  world();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  World &w = world();
  w.server.set_response(std::string(fuzz::view(data, size)));
  const eg_host *h = w.host->table();
  eg_call call{};

  static const std::string req =
      R"({"messages":[{"role":"system","content":"Antworte nur mit True oder False."},{"role":"user","content":"Text"}],"temperature":0})";
  eg_buffer out{};
  eg_status st = h->chat(h, &call, nullptr, req.data(), req.size(), &out);
  std::string text = evalgraph::take_host_buffer(out);
  if (st == EG_OK) read_answer(text);
  // An error message never shows the API key, even when the server's error body quotes it. (An answer may
  // hold it: what the server says is passed on as it is.)
  else if (text.find("sk-fuzz-secret-key") != std::string::npos) fuzz::fail("the API key reached a message", text);

  const char *texts[] = {"eins", "zwei"};
  const std::size_t lens[] = {4, 4};
  eg_embeddings emb{};
  eg_buffer err{};
  st = h->embed(h, &call, "fuzz", texts, lens, 2, &emb, &err);
  std::string etext = evalgraph::take_host_buffer(err);
  if (st == EG_OK) {
    if (emb.count != 2) fuzz::fail("embed returned the wrong number of vectors");
    volatile float sum = 0;
    for (std::size_t i = 0; i < emb.count * emb.dim; ++i) sum = sum + emb.data[i];
    if (emb.release != nullptr) emb.release(&emb);
  }
  if (st != EG_OK && etext.find("sk-fuzz-secret-key") != std::string::npos) fuzz::fail("the API key reached a message", etext);
  return 0;
}
