// fuzz_json_scan: the one JSON scanner (sdk/include/evalgraph/json_scan.hpp) against nlohmann::json as the
// oracle. A handler builds a DOM from the scanner's events (keys and strings decoded by json_scan::unescape,
// numbers within a double's range): the scanner must accept exactly the texts nlohmann accepts, and the DOM
// built from its events must equal nlohmann's. The engine's checker (lib/util/raw_json, a handler of the same
// scanner) must agree, and check()'s error offset must lie inside the text.
#include <vector>

#include "evalgraph/json_scan.hpp"
#include "fuzz_support.h"
#include "util/raw_json.h"

namespace {

namespace scan = evalgraph::json_scan;
using nlohmann::json;

constexpr std::size_t kMaxDepth = 256;  // deeper: refused here (nlohmann would take it; raw_json's limit is 512)

// Builds a nlohmann::json from the scanner's events, with a stack of its own.
class Builder : public scan::Handler {
 public:
  explicit Builder(std::string_view text) : text_(text) {}
  json root;

  bool begin(bool object, std::size_t, std::size_t depth) {
    if (depth >= kMaxDepth) return false;
    return place(object ? json::object() : json::array(), true);
  }
  bool end(bool, std::size_t, std::size_t) {
    open_.pop_back();
    return true;
  }
  bool key(std::size_t off, std::size_t len, bool, std::size_t) {
    key_.clear();
    scan::unescape(text_.substr(off + 1, len - 2), key_);
    return true;
  }
  bool scalar(scan::Kind kind, std::size_t off, std::size_t len, bool, std::size_t) {
    const std::string_view raw = text_.substr(off, len);
    switch (kind) {
      case scan::Kind::string: {
        std::string s;
        scan::unescape(raw.substr(1, raw.size() - 2), s);
        return place(std::move(s), false);
      }
      case scan::Kind::number:
        if (!scan::within_double_range(raw)) return false;
        return place(json::parse(raw), false);
      case scan::Kind::true_value:
        return place(true, false);
      case scan::Kind::false_value:
        return place(false, false);
      case scan::Kind::null:
        return place(nullptr, false);
    }
    return false;
  }

 private:
  // Puts v where the scan is: the root, the next element of an array, or the member under the last key.
  bool place(json v, bool container) {
    json *at = nullptr;
    if (open_.empty()) {
      root = std::move(v);
      at = &root;
    } else if (open_.back()->is_array()) {
      open_.back()->push_back(std::move(v));
      at = &open_.back()->back();
    } else {
      at = &((*open_.back())[key_] = std::move(v));  // a repeated key: the last one counts, as in nlohmann
    }
    if (container) open_.push_back(at);
    return true;
  }

  std::string_view text_;
  std::string key_;
  std::vector<json *> open_;
};

std::size_t depth_of(const json &j) {
  std::size_t d = 0;
  if (j.is_structured())
    for (const auto &e : j) d = std::max(d, depth_of(e));
  return j.is_structured() ? d + 1 : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  const std::string_view text = fuzz::view(data, size);
  Builder b(text);
  const scan::Error e = scan::scan(text, b);
  if (!e.ok() && e.offset > text.size()) fuzz::fail("the scanner's error lies beyond the text");
  evalgraph::rawjson::CheckResult res;
  evalgraph::rawjson::check(text, {}, res, nullptr);
  if (evalgraph::rawjson::valid(text) != res.ok()) fuzz::fail("rawjson::valid and check disagree");
  if (res.error.fault != evalgraph::rawjson::Fault::none && res.error.offset > text.size())
    fuzz::fail("rawjson::check's error lies beyond the text");
  // nlohmann skips a leading byte order mark and ends the text at a NUL byte; JSON has neither.
  const bool comparable = text.find('\0') == std::string_view::npos && text.substr(0, 3) != "\xEF\xBB\xBF";
  if (!comparable) return 0;
  json oracle;
  bool oracle_ok = false;
  try {
    oracle = json::parse(text);
    oracle_ok = depth_of(oracle) <= kMaxDepth;
  } catch (const json::exception &) {
  }
  if (e.ok() != oracle_ok) fuzz::fail(e.ok() ? "the scanner took text nlohmann refuses" : "the scanner refused JSON");
  if (oracle_ok && !res.ok()) fuzz::fail("rawjson::check refused JSON within the depth limit");
  if (e.ok() && b.root != oracle) fuzz::fail("the DOM built from the scanner's events differs from nlohmann's");
  return 0;
}
