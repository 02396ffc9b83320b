#include "io/otlp_text.h"

#include <charconv>
#include <cstring>
#include <evalgraph/utf8.hpp>

namespace evalgraph::io::otlp {

struct JsonText::Serializer {
  explicit Serializer(std::string &out)
      : s(nlohmann::detail::output_adapter<char, std::string>(out), ' ', nlohmann::json::error_handler_t::replace) {}
  nlohmann::detail::serializer<nlohmann::json> s;
};

JsonText::JsonText(std::string &out) : out_(out) {}
JsonText::~JsonText() = default;

void JsonText::value(const nlohmann::json &v) {
  comma();
  using T = nlohmann::json::value_t;
  switch (v.type()) {  // as nlohmann writes them; strings by the faster escaped(); floats and binary by nlohmann
    case T::null:
      out_ += "null";
      return;
    case T::boolean:
      out_ += v.get<bool>() ? "true" : "false";
      return;
    case T::number_integer:
      integer(v.get<std::int64_t>());
      return;
    case T::number_unsigned:
      integer(v.get<std::uint64_t>());
      return;
    case T::string:
      escaped(v.get_ref<const std::string &>());
      return;
    case T::array:
      out_ += '[';
      first_ = true;
      for (const auto &e : v) value(e);
      close(']');
      return;
    case T::object:
      out_ += '{';
      first_ = true;
      for (const auto &[k, e] : v.items()) key(k).value(e);
      close('}');
      return;
    default:
      dump(v);
  }
}

template <class Int>
void JsonText::integer(Int n) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, n).ptr;
  out_.append(buf, static_cast<std::size_t>(end - buf));
}

void JsonText::dump(const nlohmann::json &v) {
  if (!serializer_) serializer_ = std::make_unique<Serializer>(out_);
  serializer_->s.dump(v, false, false, 0);
}

void JsonText::unsigned_number(std::uint64_t n) {
  comma();
  integer(n);
}

namespace {

// What nlohmann's serializer writes for a byte below 0x20, '"' and '\\' (nullptr: the byte itself).
const char *escape_of(unsigned char c) {
  static const char *const kNamed[] = {"\\b", "\\t", "\\n", nullptr, "\\f", "\\r"};
  if (c == '"') return "\\\"";
  if (c == '\\') return "\\\\";
  if (c >= 0x08 && c <= 0x0D && kNamed[c - 0x08] != nullptr) return kNamed[c - 0x08];
  return nullptr;
}

// Whether the 8 bytes at p are all printable ASCII other than '"' and '\\' (copied as they are): bit tricks on
// one 64-bit word (a byte below 0x20, a byte equal to '"' or '\\', a byte with its high bit set).
bool plain8(const char *p) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, 8);
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
  auto has_zero = [&](std::uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const std::uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  return (below_space | has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\')) | (w & kHigh)) == 0;
}

}  // namespace

void JsonText::escaped(std::string_view s) {
  const std::size_t mark = out_.size();
  out_ += '"';
  std::size_t i = 0, run = 0;
  while (i < s.size()) {
    if (i + 8 <= s.size() && plain8(s.data() + i)) {
      i += 8;
      continue;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t n = evalgraph::utf8::sequence_length(s, i);
      if (n == 0) {  // not UTF-8: nlohmann's replacement rules, by nlohmann
        out_.resize(mark);
        dump(nlohmann::json(std::string(s)));
        return;
      }
      i += n;
      continue;
    }
    out_.append(s.data() + run, i - run);
    if (const char *e = escape_of(c)) {
      out_ += e;
    } else {
      static const char *kHex = "0123456789abcdef";
      const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out_.append(u, sizeof u);
    }
    run = ++i;
  }
  out_.append(s.data() + run, s.size() - run);
  out_ += '"';
}

}  // namespace evalgraph::io::otlp
