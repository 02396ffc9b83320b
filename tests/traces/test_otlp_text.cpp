// The trace reader writes records as JSON text directly (engine/io/otlp_text.h): byte for byte what nlohmann's
// dump(-1, ' ', false, replace) writes for the same value, for any bytes (control characters, quotes, UTF-8 of
// every length, bytes that are not UTF-8) and any shape of value.
#include <catch2/catch.hpp>
#include <random>

#include "io/otlp_text.h"

using evalgraph::io::otlp::JsonText;
using nlohmann::json;

namespace {

std::string random_bytes(std::mt19937 &rng) {
  static const std::vector<std::string> kPieces = {
      "a",        "plain text ", "\"",   "\\", "\n", "\t", "\b",   "\f",   "\r",           std::string(1, '\0'),
      "\x01",     "\x1f",        "\x7f", "é",  "€",  "😀",  "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80",
      "\xe2\x82", "\xc0\xaf"};
  std::string s;
  const int n = static_cast<int>(rng() % 40);
  for (int i = 0; i < n; ++i) s += kPieces[rng() % kPieces.size()];
  return s;
}

json random_value(std::mt19937 &rng, int depth) {
  switch (depth > 3 ? rng() % 6 : rng() % 8) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(rng()) - (1LL << 31);
    case 3:
      return static_cast<std::uint64_t>(rng()) << 20;
    case 4:
      return static_cast<double>(rng()) / 7.0e3;
    case 5:
      return random_bytes(rng);
    case 6: {
      json a = json::array();
      for (unsigned i = rng() % 4; i > 0; --i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (unsigned i = rng() % 4; i > 0; --i) o[random_bytes(rng)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

}  // namespace

TEST_CASE("traces: records' JSON text is written as nlohmann's dump writes it", "[traces]") {
  std::mt19937 rng(38);
  for (int round = 0; round < 3000; ++round) {
    const std::string s = random_bytes(rng);
    const json v = random_value(rng, 0);
    std::string text;
    JsonText w(text);
    w.open('{');
    w.key(s).string(s);
    w.key("v").value(v);
    w.key("n").unsigned_number(rng());
    w.close('}');
    const std::string s_text = json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    const std::string v_text = v.dump(-1, ' ', false, json::error_handler_t::replace);
    INFO("round " << round);
    REQUIRE(text.rfind("{" + s_text + ":" + s_text + ",\"v\":" + v_text + ",\"n\":", 0) == 0);
  }
}
