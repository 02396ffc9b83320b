// evalgraph plugin SDK — parsing JSON that someone else wrote, with a nesting limit (header-only).
//
// nlohmann::json parses without recursing, but much of what one does with the result recurses: dump(),
// copies, comparisons. A document nested 100,000 deep (an LLM answer, a string field holding JSON) would
// overflow the stack there. parse_bounded() builds the DOM through nlohmann's SAX interface and stops at the
// first container deeper than `max_depth`, before anything is built that deep; it never throws, and says
// what is wrong in words of its own (no "[json.exception...]" text):
//
//   evalgraph::json j;
//   std::string why;
//   if (!evalgraph::parse_bounded(text, j, 64, &why)) throw evalgraph::InputError("answer: " + why);
#ifndef EVALGRAPH_JSON_BOUNDED_HPP
#define EVALGRAPH_JSON_BOUNDED_HPP

#include <cmath>
#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace evalgraph {

// What the host passes nodes by default as _limits.nesting_depth (docs/concepts.md "Limits and hostile data").
constexpr int kDefaultNestingDepth = 64;

namespace detail {

// nlohmann's DOM builder behind a depth check; the first problem is kept in words.
template <class BasicJson> class BoundedSax {
 public:
  using number_integer_t = typename BasicJson::number_integer_t;
  using number_unsigned_t = typename BasicJson::number_unsigned_t;
  using number_float_t = typename BasicJson::number_float_t;
  using string_t = typename BasicJson::string_t;
  using binary_t = typename BasicJson::binary_t;

  BoundedSax(BasicJson &out, int max_depth) : dom_(out, false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t &s) { return dom_.number_float(v, s); }
  bool string(string_t &v) { return dom_.string(v); }
  bool binary(binary_t &v) { return dom_.binary(v); }
  bool key(string_t &v) { return dom_.key(v); }
  bool start_object(std::size_t n) { return enter() && dom_.start_object(n); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return enter() && dom_.start_array(n); }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  template <class Exception> bool parse_error(std::size_t position, const std::string &token, const Exception &ex) {
    if (why.empty()) {
      const std::string at = " at byte " + std::to_string(position > 0 ? position - 1 : 0);
      if (ex.id == 406)
        why = "a number beyond the range of a double (" + token.substr(0, 40) + ")" + at;
      else if (position > 0 && token.empty())
        why = "not valid JSON: the text ends too early" + at;
      else
        why = "not valid JSON" + at + (token.empty() ? std::string() : ", near '" + printable(token) + "'");
    }
    return false;
  }

  std::string why;

 private:
  bool enter() {
    if (++depth_ > max_depth_) {
      if (why.empty()) why = "nested deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    return true;
  }
  static std::string printable(const std::string &token) {
    std::string out;
    for (char c : token.substr(0, 30)) {
      auto u = static_cast<unsigned char>(c);
      out += (u < 0x20 || u == 0x7F) ? '?' : c;
    }
    return out;
  }

  nlohmann::detail::json_sax_dom_parser<BasicJson> dom_;
  int max_depth_;
  int depth_ = 0;
};

}  // namespace detail

// Parses `text` (one JSON value, surrounding whitespace allowed) into `out`. False, with `out` null and the
// reason in `why` (when given), for text that is not JSON, holds a number beyond a double's range, or nests
// objects and arrays deeper than `max_depth` (a flat object or array is depth 1).
template <class BasicJson = nlohmann::json>
bool parse_bounded(std::string_view text, BasicJson &out, int max_depth, std::string *why = nullptr) {
  out = BasicJson();
  detail::BoundedSax<BasicJson> sax(out, max_depth);
  const bool ok = BasicJson::sax_parse(text.begin(), text.end(), &sax, nlohmann::json::input_format_t::json, true);
  // nlohmann takes a NUL byte for the end of the input, so "{}\0junk" would pass: a NUL byte is never JSON
  // (inside a string nlohmann refuses it itself), and whatever follows it is refused here.
  const std::size_t nul = ok && sax.why.empty() ? text.find('\0') : std::string_view::npos;
  if (ok && sax.why.empty() && nul == std::string_view::npos) return true;
  out = BasicJson();
  if (why != nullptr)
    *why = nul != std::string_view::npos ? "not valid JSON at byte " + std::to_string(nul) + ": a NUL byte after the value"
           : sax.why.empty()             ? std::string("not valid JSON")
                                         : sax.why;
  return false;
}

// Whether a number someone else wrote (a JSON number read as a double) converts to the integer type T: its whole
// part is within T's range. Converting a double past it is undefined behaviour (1e300 tokens, an attribute of
// 2^63); NaN does not convert. A fraction does (the caller says whether it truncates or refuses one).
template <class T>
bool fits_integer(double d) {
  static_assert(std::numeric_limits<T>::is_integer, "fits_integer<T>: T is an integer type");
  const double whole = std::trunc(d);
  const double past_max = std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^digits: the first past T's max
  return whole >= (std::numeric_limits<T>::is_signed ? -past_max : 0.0) && whole < past_max;
}

}  // namespace evalgraph

#endif  // EVALGRAPH_JSON_BOUNDED_HPP
