// transform.http's request and response mapping, no HTTP and no plugin ABI: the bearer token read from its
// file, the request body rendered from the JSON template, the answer text taken from the endpoint's JSON response by a JSON pointer, and which
// HTTP statuses are worth a retry.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "chain/chain.hpp"

namespace evalgraph_transforms {

// `t` with every string in it rendered (chain/chain.hpp's render: {name} replaced by the variable's value).
json render_json(const json &t, const std::vector<std::pair<std::string, std::string>> &vars);

// The trimmed text at `pointer` of the JSON `answer` (a non-string value: its JSON text); std::runtime_error,
// prefixed with `url`, if the answer is not bounded JSON, has nothing there, or the text is empty.
std::string answer_text(const std::string &answer, const json::json_pointer &pointer, const std::string &url);

// The bearer token in `file` (relative to `pipeline_dir` where the host gave one), trimmed;
// std::invalid_argument when the file cannot be read or holds only white space.
std::string read_token(const std::string &file, const json &pipeline_dir);

// A non-2xx status a retry may help with: 408, 429, 5xx.
bool transient_status(long status);

}  // namespace evalgraph_transforms
