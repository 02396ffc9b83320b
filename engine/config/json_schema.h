#pragma once
// A validator for the JSON Schema subset plugins use to describe their parameters: type, properties,
// required, additionalProperties, items, enum, const, minimum/maximum (and exclusive), minLength/maxLength,
// minItems/maxItems, anyOf/oneOf. Unknown keywords are ignored, as the standard asks.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace evalgraph {

struct SchemaViolation {
  std::string pointer;  // JSON pointer into the value, e.g. "/weights/0"
  std::string message;
};

void validate_json_schema(const nlohmann::json &schema, const nlohmann::json &value,
                          std::vector<SchemaViolation> &out, const std::string &pointer = "");

}  // namespace evalgraph
