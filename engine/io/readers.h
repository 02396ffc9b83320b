#pragma once
// Internal to engine/io: the concrete readers behind open_dataset().
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "io/dataset.h"

namespace evalgraph::io::detail {
std::unique_ptr<RecordReader> open_csv(const std::filesystem::path &file, const nlohmann::json &options, bool tsv,
                                       const RecordLimits &limits);
std::unique_ptr<RecordReader> open_jsonl(const std::filesystem::path &file, const nlohmann::json &options,
                                         const RecordLimits &limits);
// OpenTelemetry traces (OTLP/JSON, the Collector's file exporter), one record per trace: otlp_reader.h.
std::unique_ptr<RecordReader> open_otlp(const std::filesystem::path &file, const nlohmann::json &options,
                                        const RecordLimits &limits);
// A record (a JSON object) as the text next_text() hands out: the columns first, in file order, then any other
// keys; `members` (when non-null) receives its top-level members.
void serialise_record(const nlohmann::json &record, const std::vector<std::string> &columns, std::string &text,
                      std::vector<rawjson::Member> *members);
}  // namespace evalgraph::io::detail
