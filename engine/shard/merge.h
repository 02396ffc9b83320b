#pragma once
// The shard merge (engine/shard/README.md): the records of several shards' journals, in the order of one
// unsharded run, handed to the sinks of a fresh run (the executor's merge mode).
#include <cstddef>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/pipeline.h"

namespace evalgraph::shard {

// Reads the shard journals and the data set (for the journal lines that hold only what the run added); for each
// record in dataset order calls `count` with its _errors/_skipped (for the node counts) and `write` with the
// whole record, on a writer thread of its own. Returns the records merged. Throws std::runtime_error for a
// damaged journal or a record in two shards, io::DataError for a broken data set.
std::size_t merge_journals(const std::vector<std::filesystem::path> &journals, const Pipeline &p,
                           const std::function<void(const nlohmann::json &status)> &count,
                           const std::function<void(std::size_t index, const std::string &record)> &write);

}  // namespace evalgraph::shard
