// transform.http — POSTs a JSON body built from a template to any chatbot endpoint and takes the answer from
// the JSON response by a JSON pointer. It talks HTTP itself (libcurl), with a per-attempt timeout and a small
// bounded retry for transient failures (connection errors, timeouts, 429, 5xx). See README.md. The glue and the
// HTTP exchange; the request body and the answer mapping are in exchange.cpp.
#include <curl/curl.h>

#include <chrono>
#include <evalgraph/plugin.hpp>
#include <mutex>
#include <random>
#include <thread>

#include "exchange.hpp"

namespace {

using evalgraph::json;
using namespace evalgraph_transforms;

struct Config {
  std::string url, answer_pointer = "/answer";
  json body = {{"text", "{text}"}}, headers = json::object();
  std::optional<std::string> api_key_file, transformation;
  double timeout_s = 60, retry_backoff_s = 0.5;
  int retries = 2;
};
const evalgraph::Params<Config> kParams{{
  evalgraph::param(&Config::url, "url", "The endpoint, http:// or https://.").make_required(),
  evalgraph::param(&Config::body, "body", "JSON body template; every string in it has {text} replaced by the original text."),
  evalgraph::param(&Config::answer_pointer, "answer_pointer", "JSON pointer (RFC 6901) of the answer text in the response."),
  evalgraph::param(&Config::headers, "headers", "Extra request headers.").with_schema({{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}),
  evalgraph::param(&Config::api_key_file, "api_key_file", "File holding a bearer token (relative to the pipeline's folder); sent as Authorization: Bearer (null: none)."),
  evalgraph::param(&Config::timeout_s, "timeout_s", "Limit of one attempt, connection included.").above(0).unit("s"),
  evalgraph::param(&Config::retries, "retries", "Extra attempts after a transient failure (connection error, timeout, 429, 5xx).").range(0, 5),
  evalgraph::param(&Config::retry_backoff_s, "retry_backoff_s", "Delay before retry n is backoff * 2^(n-1), with jitter.").at_least(0).unit("s"),
  transformation_param<Config>(),
}};

size_t on_data(char *p, size_t size, size_t n, void *user) {
  auto *s = static_cast<std::string *>(user);
  if (s->size() > (64u << 20)) return 0;  // refuse absurd answers
  s->append(p, size * n);
  return size * n;
}

const evalgraph::NodeSpec kSpec = chain_spec({
    .name = "transform.http",
    .description = "POSTs the original text to a chatbot endpoint, takes the answer by JSON pointer",
    .reads = {"original"},
    .flags = EG_FLAG_THREAD_SAFE,
    .params = kParams});

class HttpTransform : public ChainNode {
 public:
  HttpTransform(const evalgraph::Host &host, const Config &c, const json &p)
      : ChainNode(kSpec, c.transformation), host_(host), c_(c) {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    if (c_.url.rfind("http://", 0) != 0 && c_.url.rfind("https://", 0) != 0)
      throw std::invalid_argument("url must start with http:// or https://: " + c_.url);
    pointer_ = json::json_pointer(c_.answer_pointer);
    for (const auto &[k, v] : c_.headers.items()) headers_.push_back(k + ": " + v.get<std::string>());
    if (c_.api_key_file) token_ = read_token(*c_.api_key_file, p.value("_pipeline_dir", json()));
  }

  std::string transform(evalgraph::Call &call, const evalgraph::Record &row) override {
    const std::string orig = original(row, original_);
    const std::string body = render_json(c_.body, {{"text", orig}, {"original", orig}}).dump();
    std::string last_error;
    std::mt19937 rng(std::random_device{}());
    for (int attempt = 0; attempt <= c_.retries; ++attempt) {
      if (attempt > 0) {
        double d = c_.retry_backoff_s * (1 << (attempt - 1)) * std::uniform_real_distribution<double>(0.5, 1.0)(rng);
        std::this_thread::sleep_for(std::chrono::duration<double>(d));
        if (host_.cancelled(call)) throw evalgraph::HostError(EG_CANCELLED, "cancelled");
      }
      long status = 0;
      std::string answer;
      bool transient = false;
      last_error = post(body, answer, status, transient);
      if (last_error.empty()) return answer_text(answer, pointer_, c_.url);
      if (!transient) break;
    }
    throw std::runtime_error(last_error);
  }

 private:
  // Returns "" on a 2xx answer; otherwise the error, with `transient` telling whether a retry may help.
  std::string post(const std::string &body, std::string &answer, long &status, bool &transient) const {
    CURL *h = curl_easy_init();
    if (h == nullptr) {
      transient = true;
      return "curl_easy_init failed";
    }
    curl_slist *hdrs = curl_slist_append(nullptr, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    for (const auto &x : headers_) hdrs = curl_slist_append(hdrs, x.c_str());
    std::string auth;
    if (!token_.empty()) {
      auth = "Authorization: Bearer " + token_;
      hdrs = curl_slist_append(hdrs, auth.c_str());
    }
    curl_easy_setopt(h, CURLOPT_URL, c_.url.c_str());
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(c_.timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(c_.timeout_s, 10.0) * 1000));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    if (!auth.empty()) std::fill(auth.begin(), auth.end(), '\0');
    if (rc != CURLE_OK) {
      transient = rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                  rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_PARTIAL_FILE;
      return c_.url + ": " + curl_easy_strerror(rc);
    }
    if (status >= 200 && status < 300) return "";
    transient = transient_status(status);
    return c_.url + ": HTTP " + std::to_string(status) + ": " + answer.substr(0, 200);
  }

  evalgraph::Host host_;
  const Config c_;
  const evalgraph::Port original_ = kSpec.port("original");
  json::json_pointer pointer_;
  std::string token_;
  std::vector<std::string> headers_;
};

}  // namespace

EVALGRAPH_PLUGIN("transform_http", "Transformation by an HTTP chatbot endpoint",
                 evalgraph::node_type<HttpTransform>(kSpec))
