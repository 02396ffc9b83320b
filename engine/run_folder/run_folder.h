#pragma once
// The results folder of a run, in one place (engine/run_folder/README.md): the names of its files and folders,
// how a new one is named, the shard suffix, and which reader a data file gets. Every other file of the engine
// asks here instead of spelling a name.
//
//   <root>/<name>__<YYYYmmdd-HHMMSS>[-k][__shard-I-of-N]/
//     pipeline.yaml          the pipeline as it was run
//     run.log                the run's log (appended to by --resume)
//     run.json               the run summary; written last, so its presence means "finished"
//     junit.xml              the expect: verdict as JUnit XML (docs/ci.md), when the pipeline has expect:
//     progress/              only while the run is not finished (removed at the end)
//       journal.jsonl        the finished records, chunk by chunk (--resume replays it)
//       state.json           how the run was started (pipeline file, dataset and its size, shard)
//       cost.json            what the run has spent so far
//       interrupted.json     the summary of a stopped run
//       llm-calls.sqlite     the call log of a --no-cache run
//     shard/records.journal  a finished shard's records, for `evalgraph merge`
//     llm-cache.sqlite       a shard's own LLM response cache (unless --cache names one)
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace evalgraph::run_folder {

namespace fs = std::filesystem;

inline fs::path pipeline_copy(const fs::path &run) { return run / "pipeline.yaml"; }
inline fs::path log_file(const fs::path &run) { return run / "run.log"; }
inline fs::path summary(const fs::path &run) { return run / "run.json"; }
inline fs::path junit(const fs::path &run) { return run / "junit.xml"; }
inline fs::path progress_dir(const fs::path &run) { return run / "progress"; }
inline fs::path journal(const fs::path &run) { return progress_dir(run) / "journal.jsonl"; }
inline fs::path state(const fs::path &run) { return progress_dir(run) / "state.json"; }
inline fs::path cost(const fs::path &run) { return progress_dir(run) / "cost.json"; }
inline fs::path interrupted(const fs::path &run) { return progress_dir(run) / "interrupted.json"; }
inline fs::path llm_call_log(const fs::path &run) { return progress_dir(run) / "llm-calls.sqlite"; }
// Where a finished shard run keeps its records for the merge.
inline fs::path shard_journal(const fs::path &run) { return run / "shard" / "records.journal"; }
// A shard's LLM response cache (SQLite on a network file system is not safe to share).
inline fs::path shard_cache(const fs::path &run) { return run / "llm-cache.sqlite"; }

// Whether a run folder is finished (run.json is there) or was started and can be resumed (progress/ is there).
// The pipeline as it was run (its copy in the folder), as text; "" when it cannot be read.
std::string pipeline_text(const fs::path &run);
inline bool finished(const fs::path &run) { return fs::exists(summary(run)); }
inline bool resumable(const fs::path &run) { return fs::exists(progress_dir(run)); }

// A new run's folder: <root>/<name>__<YYYYmmdd-HHMMSS>, with -2, -3, ... where that exists. Does not create it.
fs::path new_run_dir(const std::string &name, const fs::path &root);
// What a shard's run folder adds to its name: "__shard-I-of-N" (index 0-based, shown 1-based).
std::string shard_suffix(int index, int count);

// The reader a data file gets: the declared format (lower case; "ndjson" is "jsonl") when one is given, else by
// the file's extension: .csv → "csv", .tsv/.tab → "tsv", .jsonl/.ndjson/.json → "jsonl"; "" when neither tells.
std::string data_format(const fs::path &file, const std::string &declared);
// Whether a file of that format starts with a header line (CSV and TSV), which is no record.
inline bool has_header_line(const std::string &format) { return format == "csv" || format == "tsv"; }

// Adds every number of a run.json "cost" section into another (shards merged, a resumed run's earlier
// sessions); prices are taken, not summed.
void sum_cost_json(nlohmann::json &acc, const nlohmann::json &add);

}  // namespace evalgraph::run_folder
