#pragma once
// Internal to engine/io: the concrete readers behind open_dataset().
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "io/dataset.h"

namespace evalgraph::io::detail {
std::unique_ptr<RecordReader> open_csv(const std::filesystem::path &file, const nlohmann::json &options, bool tsv);
std::unique_ptr<RecordReader> open_jsonl(const std::filesystem::path &file, const nlohmann::json &options);
}  // namespace evalgraph::io::detail
