// The command table and the option definitions of `evalgraph` (commands.h), and the texts made from them.
#include "commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <sstream>

namespace evalgraph::cli {

namespace {

// One option, defined once: "long,s" names, its help text and its value (nullptr: a flag without one).
struct OptionDef {
  const char *names;
  const char *help;
  po::value_semantic *(*value)();
};

using Strings = std::vector<std::string>;

const std::vector<OptionDef> &option_defs() {
  static const std::vector<OptionDef> defs = {
      {"help,h", "show this help (after a command: its forms and options)", nullptr},
      {"version", "print the version", nullptr},
      {"plugin-dir,P", "also load plugins from this folder (repeatable)",
       []() -> po::value_semantic * { return po::value<Strings>()->composing(); }},
      {"quiet,q", "no progress and no summary on stderr", nullptr},
      {"jobs,j", "worker threads (0: one per core)",
       []() -> po::value_semantic * { return po::value<int>()->default_value(0); }},
      {"limit", "run only the first N dataset records",
       []() -> po::value_semantic * { return po::value<long long>()->default_value(-1); }},
      {"chunk-size", "records per unit of work (tuning; 16 under a budget)",
       []() -> po::value_semantic * { return po::value<std::size_t>()->default_value(256); }},
      {"llm-concurrency",
       "cap on LLM calls in flight across providers (0: none; each provider's max_in_flight is its window)",
       []() -> po::value_semantic * { return po::value<int>()->default_value(0); }},
      {"window", "records read and not yet written at most (0: derived from the LLM windows and -j)",
       []() -> po::value_semantic * { return po::value<std::size_t>()->default_value(0); }},
      {"max-cost", "stop when the LLM calls would cost more than this many USD (docs/cost.md)",
       []() -> po::value_semantic * { return po::value<double>(); }},
      {"stop-grace", "seconds LLM calls in flight may take to finish after SIGTERM/Ctrl-C (then they are cut)",
       []() -> po::value_semantic * { return po::value<double>()->default_value(5.0); }},
      {"no-journal", "keep no progress journal (faster; the run cannot be resumed)", nullptr},
      {"no-report", "write no report.html", nullptr},
      {"output,o", "output folder (run: the results root, default: the pipeline's output.dir)",
       []() -> po::value_semantic * { return po::value<std::string>(); }},
      {"no-cache", "do not read or write the LLM response cache", nullptr},
      {"cache", "LLM response cache file (default ~/.cache/evalgraph/llm-cache.sqlite)",
       []() -> po::value_semantic * { return po::value<std::string>()->default_value(""); }},
      {"resume", "finish an interrupted run in this results folder",
       []() -> po::value_semantic * { return po::value<std::string>(); }},
      {"shard", "only shard I of N (1-based, e.g. 2/3); default: the scheduler's array index",
       []() -> po::value_semantic * { return po::value<std::string>(); }},
      {"shard-count", "the shard count for JOB_COMPLETION_INDEX (or EVALGRAPH_SHARD_COUNT)",
       []() -> po::value_semantic * { return po::value<int>()->default_value(0); }},
      {"config-dir", "a chatbot evaluation's config folder (seed 004 format)",
       []() -> po::value_semantic * { return po::value<std::string>(); }},
      {"only-transform", "with --config-dir: run the transformations only", nullptr},
      {"json", "print JSON", nullptr},
      {"fail-if-worse", "exit 4 when RUN_B is significantly worse than RUN_A on this metric (node.field; repeatable)",
       []() -> po::value_semantic * { return po::value<Strings>()->composing(); }},
      {"alpha", "with --fail-if-worse: the paired test's significance level",
       []() -> po::value_semantic * { return po::value<double>()->default_value(0.05, "0.05"); }},
      {"min-diff", "with --fail-if-worse: tolerate a worsening up to this size (the metric's units)",
       []() -> po::value_semantic * { return po::value<double>()->default_value(0.0); }},
      {"labels", "this labels file in place of the pipeline's labels path",
       []() -> po::value_semantic * { return po::value<std::string>(); }},
      {"agreement", "compare METRIC~LABEL (node.field~label field; repeatable; replaces the pipeline's agreement:)",
       []() -> po::value_semantic * { return po::value<Strings>()->composing(); }},
  };
  return defs;
}

std::string long_name(const OptionDef &d) {
  const std::string n = d.names;
  return n.substr(0, n.find(','));
}

bool is_global(const std::string &option) {
  const auto &g = global_options();
  return std::find(g.begin(), g.end(), option) != g.end();
}

bool takes(const Command &c, const std::string &option) {
  return std::any_of(c.options.begin(), c.options.end(), [&](const char *o) { return option == o; });
}

// The commands that take a (non-global) option, in table order.
Strings commands_taking(const std::string &option) {
  Strings names;
  for (const auto &c : commands())
    if (takes(c, option)) names.push_back(c.name);
  return names;
}

std::string join(const Strings &words) {
  std::string s;
  for (const auto &w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

void add(po::options_description &to, const OptionDef &d, const std::string &help) {
  if (d.value == nullptr)
    to.add_options()(d.names, help.c_str());
  else
    to.add_options()(d.names, d.value(), help.c_str());
}

// The options `keep` selects, under `caption`; with `name_takers`, each help text ends with the commands taking it.
po::options_description describe(const std::string &caption, const std::function<bool(const std::string &)> &keep,
                                 bool name_takers) {
  po::options_description out(caption, 120, 60);
  for (const auto &d : option_defs()) {
    if (!keep(long_name(d))) continue;
    add(out, d, name_takers ? fmt::format("{} [{}]", d.help, join(commands_taking(long_name(d)))) : d.help);
  }
  return out;
}

// "  evalgraph NAME SYNOPSIS", the summary in a column.
std::string form_line(const Command &c, const Form &f) {
  std::string line = fmt::format("  evalgraph {} {}", c.name, f.synopsis);
  line += line.size() < 43 ? std::string(44 - line.size(), ' ') : std::string(3, ' ');
  return line + f.summary + "\n";
}

std::string forms_of(const Command &c) {
  std::string lines;
  for (const auto &f : c.forms) lines += form_line(c, f);
  return lines;
}

const char *kExitCodes =
    "exit codes: 0 success, 1 run finished but some records failed, 2 usage or configuration error,\n"
    "            3 runtime error (I/O, broken data), 4 an expectation (expect:) or a --fail-if-worse gate failed,\n"
    "            5 cost budget reached (resumable), 130 stopped by a signal\n"
    "            (resumable)\n";

std::string text_of(const po::options_description &d) {
  std::ostringstream out;
  out << d;
  return out.str();
}

}  // namespace

// `run --config-dir` (the seed-004 chatbot evaluation) is a form of run: its options are run's.
const std::vector<Command> &commands() {
  static const std::vector<Command> table = {
      {"run",
       {{"PIPELINE.yaml [options]", "run a pipeline over its dataset"},
        {"--resume RESULTS_FOLDER", "finish a run that was interrupted or crashed"},
        {"PIPELINE.yaml --shard I/N", "run shard I of N (also from SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX)"},
        {"--config-dir DIR [--only-transform]", "a chatbot evaluation from seed-004 config files"}},
       {"jobs", "limit", "chunk-size", "llm-concurrency", "window", "max-cost", "stop-grace", "no-journal", "no-report",
        "output", "no-cache", "cache", "resume", "shard", "shard-count", "config-dir", "only-transform"},
       cmd_run},
      {"merge",
       {{"SHARD_FOLDER... -o DIR", "merge the shards of a run into one results folder"}},
       {"output"},
       cmd_merge},
      {"cache", {{"merge -o OUT IN...", "combine LLM response caches (the shards' caches)"}}, {"output"}, cmd_cache},
      {"validate", {{"PIPELINE.yaml", "check a pipeline without running it"}}, {}, cmd_validate},
      {"graph", {{"PIPELINE.yaml", "print the pipeline's DAG as Graphviz DOT"}}, {}, cmd_graph},
      {"estimate",
       {{"PIPELINE.yaml [--json]", "what a run will call and cost (docs/cost.md)"}},
       {"json", "jobs", "limit", "no-cache", "cache"},
       cmd_estimate},
      {"plugins", {{"[--json]", "list the loaded plugins and node types"}}, {"json"}, cmd_plugins},
      {"compare",
       {{"RUN_A RUN_B [--json] [-o DIR]", "paired statistics of two results folders"},
        {"RUN_A RUN_B --fail-if-worse NODE.FIELD [--alpha A] [--min-diff D]", "the regression gate"}},
       {"json", "output", "fail-if-worse", "alpha", "min-diff"},
       cmd_compare},
      {"agree",
       {{"RUN_DIR [--labels FILE] [--agreement METRIC~LABEL ...] [--json] [-o DIR]", "agreement with people's labels"}},
       {"labels", "agreement", "json", "output"},
       cmd_agree},
      {"combine-experiments",
       {{"[FOLDER...] [-o RESULTS]", "merge chatbot evaluation results"}},
       {"output"},
       cmd_combine},
      {"create-dataset",
       {{"--config-dir DIR", "generate a data set from create_dataset.yaml"}},
       {"config-dir"},
       cmd_create_dataset},
  };
  return table;
}

// --plugin-dir and --quiet are global so that a wrapper can pass them to any command: a command that loads no
// plugin or prints no progress has nothing for them to change.
const std::vector<std::string> &global_options() {
  static const std::vector<std::string> names = {"help", "version", "plugin-dir", "quiet"};
  return names;
}

const Command *find_command(const std::string &name) {
  for (const auto &c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

std::vector<std::string> command_names() {
  Strings names;
  for (const auto &c : commands()) names.push_back(c.name);
  return names;
}

po::options_description all_options() {
  po::options_description all;
  for (const auto &d : option_defs()) add(all, d, d.help);
  return all;
}

po::options_description hidden_options() {
  po::options_description hidden;
  hidden.add_options()("command", po::value<std::string>())("args", po::value<Strings>())(
      "commands-json", "print the command table as JSON (for tests/engine/test_command_table.cpp)");
  return hidden;
}

std::string usage_text() {
  std::string text = "evalgraph — a plugin-based evaluation engine for LLM chatbots\n\nusage:\n";
  for (const auto &c : commands()) text += forms_of(c);
  text += "  evalgraph COMMAND --help                  a command's forms and options\n";
  text += "  evalgraph --version | --help\n\n";
  return text + kExitCodes;
}

std::string full_help() {
  const auto other = [](const std::string &o) { return !is_global(o); };
  return usage_text() + "\n" + text_of(describe("global options", is_global, false)) + "\n" +
         text_of(describe("command options [the commands that take them]", other, true));
}

std::string command_help(const Command &c) {
  const auto own = [&c](const std::string &o) { return takes(c, o); };
  std::string text = "usage:\n" + forms_of(c) + "\n";
  if (!c.options.empty()) text += text_of(describe(fmt::format("options of {}", c.name), own, false)) + "\n";
  return text + text_of(describe("global options", is_global, false));
}

std::string command_usage(const Command &c) {
  return "usage:\n" + forms_of(c) +
         fmt::format("(evalgraph {} --help: its options; evalgraph --help: every command and option)\n", c.name);
}

std::string command_usage(const std::string &name) {
  const Command *c = find_command(name);
  return c == nullptr ? "" : command_usage(*c);
}

std::string option_not_taken(const Command &c, const std::vector<std::string> &given) {
  for (const auto &o : given) {
    if (is_global(o) || takes(c, o)) continue;
    const Strings takers = commands_taking(o);
    return fmt::format("evalgraph: --{} is not an option of '{}' ({}); see evalgraph {} --help", o, c.name,
                       takers.empty() ? "no command takes it" : "it is an option of: " + join(takers), c.name);
  }
  return "";
}

nlohmann::json table_json() {
  nlohmann::json out = {{"global_options", global_options()},
                        {"options", nlohmann::json::array()},
                        {"commands", nlohmann::json::array()}};
  for (const auto &d : option_defs()) out["options"].push_back(long_name(d));
  for (const auto &c : commands()) {
    nlohmann::json forms = nlohmann::json::array();
    for (const auto &f : c.forms) forms.push_back({{"synopsis", f.synopsis}, {"summary", f.summary}});
    nlohmann::json options = nlohmann::json::array();
    for (const char *o : c.options) options.push_back(o);
    out["commands"].push_back({{"name", c.name}, {"forms", forms}, {"options", options}});
  }
  return out;
}

}  // namespace evalgraph::cli
