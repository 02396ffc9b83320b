// agent.trajectory: the comparison of an agent's tool calls with the calls that were expected (README.md has the
// definitions, the parameters and an example of every output). The computation, without the plugin ABI:
//   parse_tool_calls   a record's tool_calls → ActualCalls (arguments given as JSON text are parsed)
//   parse_expected     the `expected:` parameter or port value → alternatives of ExpectedCalls, regexes compiled
//   arguments_match    one expected call's arguments against one actual call's (equal | subset | regex)
//   compare            one alternative against the actual calls under an order mode
//   evaluate           everything a record's output holds
// Errors in what a user wrote are std::invalid_argument with the place (e.g. "expected.1.arguments.city: ...").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trajectory {

using json = nlohmann::json;

enum class Order { Exact, InOrder, AnyOrder, Subset };
enum class ArgMatch { Equal, Subset, Regex };

const char *order_name(Order o);
const char *match_name(ArgMatch m);
Order order_from(const std::string &name);     // "exact" | "in_order" | "any_order" | "subset"
ArgMatch match_from(const std::string &name);  // "equal" | "subset" | "regex"

// A compiled PCRE2 pattern (Perl-compatible, UTF-8), searched in a text with bounded work: a pattern that would
// backtrack for ever gives up instead (regex.cpp). Shared by the threads that match with it.
class Regex {
 public:
  enum class Result { Match, NoMatch, GaveUp };
  explicit Regex(const std::string &pattern);  // a pattern that does not compile: std::invalid_argument, in words
  ~Regex();
  Regex(const Regex &) = delete;
  Regex &operator=(const Regex &) = delete;
  // Search (unanchored). GaveUp: the work limit was reached; `why` (when given) says which.
  Result search(std::string_view text, std::string *why) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> c_;
};
// The regexes of one expected set, compiled once, by pattern.
using Regexes = std::map<std::string, std::shared_ptr<const Regex>, std::less<>>;

struct ExpectedCall {
  std::string name;
  std::optional<json> arguments;  // absent: any arguments match
  ArgMatch match = ArgMatch::Equal;
  json shown;  // the call as the user wrote it (first_mismatch shows it)
};
using Alternative = std::vector<ExpectedCall>;

struct Expected {
  std::vector<Alternative> alternatives;  // a flat list of calls is one alternative
  Regexes regexes;
};

struct ActualCall {
  std::string name;
  json arguments;               // an object (parsed where it came as JSON text); the text where it did not parse
  bool arguments_text = false;  // the arguments are text that holds no JSON object
  json shown;                   // {name, arguments} as they came
};

struct Options {
  Order order = Order::InOrder;
  ArgMatch match = ArgMatch::Equal;  // for the expected calls that do not say their own
  std::vector<std::string> forbidden;
  std::optional<long long> max_steps;
  bool allow_repeats = true;
  int nesting_depth = 64;  // JSON text in arguments is parsed at most this deep
};

// One regex search takes at most this many steps of PCRE2's matcher (its match limit) and this much heap (KiB).
constexpr std::uint32_t kRegexMatchLimit = 1'000'000;
constexpr std::uint32_t kRegexHeapLimitKiB = 20'000;
// An alternative is compared with the actual calls as a table of at most this many pairs.
constexpr std::size_t kMaxPairs = 4'000'000;
// Lists in the output (redundant and forbidden calls) name at most this many calls; their counts are complete.
constexpr std::size_t kMaxListed = 100;

// The JSON Schema of the `expected:` parameter (a list of calls or of lists of calls; the engine checks it).
json expected_schema();

// tool_calls: an array of objects with a string `name` (null: no calls). `where` names the port in errors.
std::vector<ActualCall> parse_tool_calls(const json &v, int nesting_depth, const std::string &where);

// A list of calls, or a list of lists of calls (alternatives). `where` is the prefix of error places
// ("expected"); `from_text` also takes arguments given as JSON text (a dataset's field, not a parameter).
Expected parse_expected(const json &v, ArgMatch default_match, const std::string &where, int nesting_depth,
                        bool from_text);

// Whether the actual call's arguments satisfy the expected call's (the names are not compared). When they do
// not and `why` is given, it gets the first difference with its place ("arguments.city: expected ...").
bool arguments_match(const ExpectedCall &e, const ActualCall &a, const Regexes &rx, std::string *why);
// Name and arguments; `why` as above ("name: expected 'a', got 'b'").
bool call_matches(const ExpectedCall &e, const ActualCall &a, const Regexes &rx, std::string *why);
// The canonical text of a call for finding identical ones: its name and its arguments with sorted keys and
// integral numbers written as integers (1 and 1.0 are the same argument).
std::string call_key(const ActualCall &a);

struct Pair {
  std::size_t expected, actual;
};
struct Mismatch {
  std::optional<std::size_t> index;  // the actual call concerned (null: none, e.g. the trajectory ended)
  json expected, actual;             // the calls (null where there is none)
  std::string reason;
};
struct AlternativeResult {
  bool passed = false;           // the order mode's condition holds
  std::vector<Pair> assignment;  // a maximum one-to-one assignment respecting the order mode
  std::optional<Mismatch> first_mismatch;
};

AlternativeResult compare(const Alternative &expected, const std::vector<ActualCall> &actual, Order order,
                          const Regexes &rx);

// The record's output (README.md: "Outputs"). `expected` null: none given (only forbidden, max_steps and
// repeats are checked); `source`: where the expectation came from ("parameter", "port", "none").
json evaluate(const Expected *expected, const std::vector<ActualCall> &actual, const Options &o, const char *source);

}  // namespace trajectory
