// The evalgraph command line: parses it, and the handlers of the commands that cli/commands.cpp's table lists
// (run with --resume, --shard and --config-dir, merge, cache merge, validate, graph, estimate, plugins, compare,
// agree, combine-experiments, create-dataset).
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "agree/agree.h"
#include "chatbot_config/experiment.h"
#include "commands.h"
#include "compare/compare.h"
#include "entry/merge_entry.h"
#include "entry/pipeline_entry.h"
#include "entry/results_entry.h"
#include "entry/run_entry.h"
#include "estimate/estimate.h"
#include "summary/provider_summary.h"
#include "util/exit_codes.h"
#include "util/version.h"

#ifdef EVALGRAPH_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace evalgraph;
using nlohmann::json;

namespace {

// Exit codes: util/exit_codes.h (the README's table).
constexpr int kExitOk = exit_code::ok;
constexpr int kExitRecordFailures = exit_code::records_failed;
constexpr int kExitUsage = exit_code::usage;
constexpr int kExitRuntime = exit_code::runtime;
constexpr int kExitInterrupted = exit_code::interrupted;

// What an option error prints under its message: the usage of the command it was about (the first word of the
// command line that names one), or every command's usage when none does.
std::string usage_of(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-')
      if (std::string u = cli::command_usage(argv[i]); !u.empty()) return u;
  return cli::usage_text();
}

// The plugins of the search path; what was refused is a warning (the rest loads).
void load_plugins_warning(PluginRegistry &reg, const std::vector<std::string> &dirs, bool quiet_errors = false) {
  for (const auto &e : load_plugins(reg, dirs))
    if (!quiet_errors) std::fprintf(stderr, "evalgraph: warning: %s\n", e.c_str());
}

int print_config_error(const ConfigError &e) {
  for (const auto &d : e.diagnostics()) std::fprintf(stderr, "%s\n", d.str().c_str());
  std::fprintf(stderr, "evalgraph: %zu problem%s found; nothing was run\n", e.diagnostics().size(),
               e.diagnostics().size() == 1 ? "" : "s");
  return kExitUsage;
}

int list_plugins(const std::vector<std::string> &dirs, bool as_json) {
  PluginRegistry reg;
  load_plugins_warning(reg, dirs, as_json);
  if (as_json) {
    json out = {{"engine_version", version_string()}, {"abi", {{"major", EG_ABI_MAJOR}, {"minor", EG_ABI_MINOR}}}};
    json plugins = json::array();
    for (const auto &lp : reg.plugins()) {
      json types = json::array();
      for (const auto &[name, t] : reg.types()) {
        if (t.plugin != lp.get()) continue;
        types.push_back({{"name", name},
                         {"kind", kind_name(t.type->kind)},
                         {"description", t.type->description ? t.type->description : ""},
                         {"reads", t.reads},
                         {"reads_optional", t.reads_optional},
                         {"writes", t.writes},
                         {"thread_safe", t.has(EG_FLAG_THREAD_SAFE)},
                         {"sequence", t.has(EG_FLAG_SEQUENCE)},
                         {"uses_llm", t.has(EG_FLAG_USES_LLM)},
                         {"params_schema", t.params_schema}});
      }
      plugins.push_back({{"name", lp->descriptor->name},
                         {"version", lp->descriptor->version},
                         {"description", lp->descriptor->description ? lp->descriptor->description : ""},
                         {"abi", fmt::format("{}.{}", lp->descriptor->abi_major, lp->descriptor->abi_minor)},
                         {"path", lp->path.string()},
                         {"node_types", types}});
    }
    out["plugins"] = plugins;
    out["refused"] = reg.errors();
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::size_t w_name = 9, w_plugin = 6;  // column widths from the longest entries
  for (const auto &[name, t] : reg.types()) {
    w_name = std::max(w_name, name.size());
    w_plugin = std::max(w_plugin, std::strlen(t.plugin->descriptor->name) + std::strlen(t.plugin->descriptor->version) + 1);
  }
  std::cout << fmt::format("{:<{}}  {:<9}  {:<{}}  {:<3}  {}\n", "NODE TYPE", w_name, "KIND", "PLUGIN", w_plugin, "ABI",
                           "DESCRIPTION");
  for (const auto &[name, t] : reg.types()) {
    std::cout << fmt::format("{:<{}}  {:<9}  {:<{}}  {:<3}  {}\n", name, w_name, kind_name(t.type->kind),
                             fmt::format("{} {}", t.plugin->descriptor->name, t.plugin->descriptor->version), w_plugin,
                             fmt::format("{}.{}", t.plugin->descriptor->abi_major, t.plugin->descriptor->abi_minor),
                             t.type->description ? t.type->description : "");
  }
  if (reg.types().empty()) std::cout << "(no plugins found; searched: " << builtin_plugin_dir().string() << ")\n";
  return kExitOk;
}

// The command line's settings of a run: workers, limits, chunks, windows, journal, progress display. A
// --chunk-size left out stays 0: the engine picks the default (RunOptions::chunk_records()).
void apply_run_flags(const po::variables_map &vm, RunOptions &opt) {
  opt.jobs = default_jobs(vm["jobs"].as<int>());
  opt.limit = vm["limit"].as<long long>();
  if (!vm["chunk-size"].defaulted()) opt.chunk_size = std::max<std::size_t>(1, vm["chunk-size"].as<std::size_t>());
  opt.llm_concurrency = std::max(0, vm["llm-concurrency"].as<int>());
  opt.window = vm["window"].as<std::size_t>();
  opt.journal = vm.count("no-journal") == 0;
  opt.progress = progress_wanted(vm.count("quiet") != 0);
}

// Where the run starts: the pipeline file or --resume, the shard, the results folder and the budget.
RunStart run_start(const std::string &file, const po::variables_map &vm) {
  RunStart s;
  if (vm.count("resume"))
    s.resume_dir = vm["resume"].as<std::string>();
  else
    s.pipeline_file = file;
  if (vm.count("shard")) s.shard = vm["shard"].as<std::string>();
  s.shard_count = vm["shard-count"].as<int>();
  if (vm.count("output")) s.output_root = vm["output"].as<std::string>();
  if (vm.count("max-cost")) s.max_cost_usd = vm["max-cost"].as<double>();
  s.report = vm.count("no-report") == 0;
  return s;
}

// One line per node that did not finish every record: its counts and first error. Records a stop left for
// --resume are counted apart, as stopped, not as failed.
void print_node_lines(const RunResult &r) {
  for (const auto &[id, st] : r.nodes) {
    if (st.failed + st.skipped + st.stopped == 0) continue;
    const std::string stopped = st.stopped == 0 ? "" : fmt::format(", {} stopped (--resume runs them)", st.stopped);
    std::fprintf(stderr, "  node %s: %zu ok, %zu failed, %zu skipped%s%s%s\n", id.c_str(), st.ok, st.failed, st.skipped,
                 stopped.c_str(), st.first_error.empty() ? "" : "; first error: ", st.first_error.c_str());
  }
}

// The run's summary on stderr: records, the nodes with failures, the providers and the cost.
void print_run_summary(const Pipeline &p, const RunResult &r) {
  std::fprintf(stderr, "evalgraph: %s: %zu records in %.2f s (%.0f records/s), %zu with failures\n",
               p.name.c_str(), r.records, r.seconds, r.seconds > 0 ? r.records / r.seconds : 0.0, r.failed_records);
  print_node_lines(r);
  if (r.summary.contains("llm")) {  // calls, tokens, and how fast each provider was driven (docs/llm-providers.md)
    for (const auto &[name, s] : r.summary["llm"].items())
      std::fputs(summary::provider_lines(name, s).c_str(), stderr);
  }
  if (const auto c = r.summary.find("cost"); c != r.summary.end())  // docs/cost.md
    std::fprintf(stderr, "  cost: $%.4f (%s billed calls, %s answered by the cache for free)\n",
                 c->value("cost_usd", 0.0), c->value("billed_calls", json(0)).dump().c_str(),
                 c->value("cache_hits", json(0)).dump().c_str());
}

// A stopped run: why, and how to go on (for the budget: what was spent, what is left; docs/cost.md).
int report_stop(const RunResult &r, double max_cost_usd) {
  std::string detail = stop_detail();
  if (r.stop_reason == StopReason::budget) {
    const double spent = r.summary.contains("cost") ? r.summary["cost"].value("cost_usd", 0.0) : 0.0;
    std::fprintf(stderr,
                 "evalgraph: budget reached: spent $%.4f of the $%.4g budget (%s); %zu records finished, %s remain; "
                 "continue with a larger budget:\n  evalgraph run --resume %s --max-cost AMOUNT\n",
                 spent, max_cost_usd, detail.c_str(), r.records,
                 r.remaining_records >= 0 ? fmt::format("{} records", r.remaining_records).c_str() : "the other records",
                 r.run_dir.string().c_str());
    return stop_exit_code(r.stop_reason);
  }
  std::fprintf(stderr, "evalgraph: stopped (%s%s%s) after %zu records; finish the run with:\n  evalgraph run --resume %s\n",
               stop_reason_name(r.stop_reason), detail.empty() ? "" : ": ", detail.c_str(), r.records,
               r.run_dir.string().c_str());
  return r.stop_reason == StopReason::none ? kExitInterrupted : stop_exit_code(r.stop_reason);
}

// expect: (docs/ci.md): a failed expectation is the CI gate, exit 4 even when records failed too (both said).
int finished_exit_code(const Pipeline &p, const RunResult &r, bool quiet) {
  if (auto a = r.summary.find("agreement"); a != r.summary.end() && !quiet)  // docs/agreement.md
    std::fprintf(stderr, "agreement with people:\n%s", agree::agreement_text(*a).c_str());
  if (auto v = r.summary.find("expectations"); v != r.summary.end()) {
    if (v->contains("deferred") && !quiet)
      std::fprintf(stderr, "evalgraph: expect: %s\n", (*v)["deferred"].get<std::string>().c_str());
    if (!announce_expectations(*v, p.name, quiet)) {
      std::fprintf(stderr, "evalgraph: %zu of %zu expectations failed (junit.xml in the results folder)%s\n",
                   (*v)["failed"].get<std::size_t>(), (*v)["total"].get<std::size_t>(),
                   r.failed_records > 0 ? fmt::format("; {} records failed too", r.failed_records).c_str() : "");
      return kExitExpectationFailed;
    }
  }
  return r.failed_records > 0 ? kExitRecordFailures : kExitOk;
}

int run_pipeline_file(const std::string &file, const po::variables_map &vm, const std::vector<std::string> &dirs) {
  PluginRegistry reg;
  load_plugins_warning(reg, dirs);
  StopOnSignals stop(vm["stop-grace"].as<double>());
  RunOptions opt;
  apply_run_flags(vm, opt);
  Pipeline p = start_run(run_start(file, vm), opt);  // engine/entry/run_entry.h: new, resumed, shard, budget
  stop.watch(opt.run_dir);
  const bool quiet = vm.count("quiet") != 0;
  RunRequest req{opt,
                 vm.count("no-report") == 0,
                 vm.count("no-cache") != 0,
                 vm["cache"].as<std::string>(),
                 quiet ? EG_LOG_ERROR : EG_LOG_WARN,
                 StopOnSignals::host_hook};
  RunResult r = run_pipeline(p, reg, req);  // (front ends run here too)

  if (!quiet) print_run_summary(p, r);
  std::printf("%s\n", r.run_dir.string().c_str());
  if (r.interrupted) return report_stop(r, req.opt.max_cost_usd);
  return finished_exit_code(p, r, quiet);
}

// ---- the chatbot evaluation of seed 004 (frontends/chatbot_config/) ----
int cmd_chatbot_run(const po::variables_map &vm, const std::vector<std::string> &dirs) {
  PluginRegistry reg;
  load_plugins_warning(reg, dirs);
  chatbot::RunSettings s;
  s.config_dir = vm["config-dir"].as<std::string>();
  s.only_transform = vm.count("only-transform") != 0;
  s.report = vm.count("no-report") == 0;
  s.jobs = default_jobs(vm["jobs"].as<int>());
  s.no_cache = vm.count("no-cache") != 0;
  s.cache_path = vm["cache"].as<std::string>();
  if (vm.count("output")) s.results_root = vm["output"].as<std::string>();
  const bool quiet = vm.count("quiet") != 0;
  s.progress = progress_wanted(quiet);
  s.stderr_level = quiet ? EG_LOG_ERROR : EG_LOG_WARN;
  s.on_host = StopOnSignals::host_hook;
  StopOnSignals stop(vm["stop-grace"].as<double>());
  RunResult r = chatbot::run_experiment(s, reg);
  if (!quiet) {
    std::fprintf(stderr, "evalgraph: %zu records in %.2f s, %zu with failures\n", r.records, r.seconds, r.failed_records);
    print_node_lines(r);
  }
  std::printf("%s\n", r.run_dir.string().c_str());
  if (r.interrupted) {
    std::fprintf(stderr, "evalgraph: interrupted; finish the run with:\n  evalgraph run --resume %s\n", r.run_dir.string().c_str());
    return r.stop_reason == StopReason::none ? kExitInterrupted : stop_exit_code(r.stop_reason);
  }
  return r.failed_records > 0 ? kExitRecordFailures : kExitOk;
}

// The words of the command line: the options (long names, in command-line order) and the command with its
// arguments. An error is the exception of Boost.Program_options.
std::vector<std::string> parse_command_line(int argc, char **argv, po::variables_map &vm) {
  po::options_description all;
  all.add(cli::all_options()).add(cli::hidden_options());
  po::positional_options_description pos;
  pos.add("command", 1).add("args", -1);
  const po::parsed_options parsed = po::command_line_parser(argc, argv).options(all).positional(pos).run();
  po::store(parsed, vm);
  po::notify(vm);
  std::vector<std::string> given;
  for (const auto &o : parsed.options)
    if (o.position_key < 0 && o.string_key != "command" && o.string_key != "args") given.push_back(o.string_key);
  return given;
}

// A command's handler, with the errors that end any command turned into their message and exit code.
int run_handler(const cli::Command &c, const cli::Invocation &in) {
  try {
    return c.handler(in);
  } catch (const ConfigError &e) {
    return print_config_error(e);
  } catch (const io::DataError &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitRuntime;
  } catch (const nlohmann::json::exception &e) {
    // Data reaches nlohmann only after our own checks: if one still gets here, say it without the library's
    // "[json.exception...]" prefix.
    std::string w = e.what();
    if (auto close = w.find("] "); !w.empty() && w[0] == '[' && close != std::string::npos) w.erase(0, close + 2);
    std::fprintf(stderr, "evalgraph: error: unexpected JSON: %s\n", w.c_str());
    return kExitRuntime;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "evalgraph: error: %s\n", e.what());
    return kExitRuntime;
  }
}

std::string output_folder(const po::variables_map &vm) {
  return vm.count("output") ? vm["output"].as<std::string>() : "";
}

// validate and graph: the one pipeline file, loaded and planned.
// The plan refers to the node types in `reg`: the registry must outlive it.
std::optional<PlannedPipeline> load_one_pipeline(const cli::Invocation &in, PluginRegistry &reg) {
  if (in.args.size() != 1) {
    std::fprintf(stderr, "evalgraph %s: give exactly one pipeline file\n\n%s", in.command.c_str(),
                 cli::command_usage(in.command).c_str());
    return std::nullopt;
  }
  load_plugins_warning(reg, in.plugin_dirs);
  return plan_pipeline_file(in.args[0], reg);
}

}  // namespace

// ---- the handlers of the command table (cli/commands.cpp) ----
namespace evalgraph::cli {

int cmd_run(const Invocation &in) {
  const po::variables_map &vm = in.vm;
  if (vm.count("config-dir") && in.args.empty()) {
    if (vm.count("shard") || vm["shard-count"].as<int>() > 0) {
      std::fprintf(stderr, "evalgraph run --config-dir: --shard is for pipeline runs (evalgraph run PIPELINE.yaml --shard I/N)\n");
      return kExitUsage;
    }
    return cmd_chatbot_run(vm, in.plugin_dirs);
  }
  if (vm.count("resume") && in.args.empty()) return run_pipeline_file("", vm, in.plugin_dirs);
  if (in.args.size() != 1) {
    std::fprintf(stderr, "evalgraph run: give exactly one pipeline file\n\n%s", command_usage("run").c_str());
    return kExitUsage;
  }
  return run_pipeline_file(in.args[0], vm, in.plugin_dirs);
}

int cmd_merge(const Invocation &in) {
  return run_merge(in.args, output_folder(in.vm), in.plugin_dirs, in.vm.count("quiet") != 0);
}

int cmd_cache(const Invocation &in) {
  if (in.args.empty() || in.args[0] != "merge") {
    std::fprintf(stderr, "evalgraph cache: the one subcommand is: evalgraph cache merge -o OUT.sqlite IN.sqlite...\n");
    return kExitUsage;
  }
  return run_cache_merge({in.args.begin() + 1, in.args.end()}, output_folder(in.vm));
}

int cmd_validate(const Invocation &in) {
  PluginRegistry reg;
  std::optional<PlannedPipeline> l = load_one_pipeline(in, reg);
  if (!l) return kExitUsage;
  std::printf("%s: ok (%zu nodes, %zu sinks, %zu dataset columns)\n", in.args[0].c_str(), l->plan.nodes.size(),
              l->plan.sinks.size(), l->plan.dataset_columns.size());
  return kExitOk;
}

int cmd_graph(const Invocation &in) {
  PluginRegistry reg;
  std::optional<PlannedPipeline> l = load_one_pipeline(in, reg);
  if (!l) return kExitUsage;
  std::cout << to_dot(l->pipeline, l->plan);
  return kExitOk;
}

int cmd_estimate(const Invocation &in) {  // docs/cost.md
  const po::variables_map &vm = in.vm;
  if (in.args.size() != 1) {
    std::fprintf(stderr, "evalgraph estimate: give exactly one pipeline file\n\n%s", command_usage("estimate").c_str());
    return kExitUsage;
  }
  estimate::Options eo{vm["limit"].as<long long>(), std::max(1, vm["jobs"].as<int>()), vm["cache"].as<std::string>(),
                       vm.count("no-cache") != 0};
  eo.jobs = default_jobs(vm["jobs"].as<int>());
  return estimate::run_command(in.args[0], vm.count("json") != 0, eo, in.plugin_dirs);
}

int cmd_plugins(const Invocation &in) { return list_plugins(in.plugin_dirs, in.vm.count("json") != 0); }

int cmd_compare(const Invocation &in) {  // docs/ci.md for the gate
  const po::variables_map &vm = in.vm;
  compare::Gate g;
  if (vm.count("fail-if-worse")) g.metrics = vm["fail-if-worse"].as<std::vector<std::string>>();
  g.alpha = vm["alpha"].as<double>();
  g.min_diff = vm["min-diff"].as<double>();
  return compare::run_compare(in.args, vm.count("json") != 0, output_folder(vm), g);
}

int cmd_agree(const Invocation &in) {  // docs/agreement.md
  const po::variables_map &vm = in.vm;
  agree_cli::Options ao;
  if (vm.count("labels")) ao.labels_file = vm["labels"].as<std::string>();
  if (vm.count("agreement")) ao.entries = vm["agreement"].as<std::vector<std::string>>();
  ao.json = vm.count("json") != 0;
  ao.quiet = vm.count("quiet") != 0;
  ao.output_dir = output_folder(vm);
  return agree_cli::run_command(in.args, ao);
}

int cmd_combine(const Invocation &in) {
  PluginRegistry reg;
  load_plugins_warning(reg, in.plugin_dirs);
  std::vector<fs::path> folders(in.args.begin(), in.args.end());
  fs::path root = in.vm.count("output") ? fs::path(in.vm["output"].as<std::string>()) : fs::path("results");
  std::printf("%s\n", chatbot::combine_experiments(folders, root, reg).string().c_str());
  return kExitOk;
}

int cmd_create_dataset(const Invocation &in) {
  chatbot::CreateSettings s;
  s.config_dir = in.vm.count("config-dir") ? in.vm["config-dir"].as<std::string>() : "config";
  s.no_cache = true;
  std::vector<std::string> warnings;
  fs::path out = chatbot::create_dataset(s, warnings);
  for (const auto &w : warnings) std::fprintf(stderr, "evalgraph: warning: %s\n", w.c_str());
  std::printf("%s\n", out.string().c_str());
  return kExitOk;
}

}  // namespace evalgraph::cli

int main(int argc, char **argv) {
#ifdef EVALGRAPH_WITH_MIMALLOC
  // 2 MiB pages for the heap (transparent huge pages, where the kernel allows them: Debian's default "madvise"):
  // far fewer page faults and TLB misses on the large buffers of big inputs. Measured: the trace reader -40 % CPU
  // (bench/traces_bench.sh), `evalgraph agree` on a million records -30 % (bench/agreement_bench.sh).
  mi_option_enable(mi_option_large_os_pages);
#endif
  po::variables_map vm;
  std::vector<std::string> given;
  try {
    given = parse_command_line(argc, argv, vm);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "evalgraph: %s\n\n%s", e.what(), usage_of(argc, argv).c_str());
    return kExitUsage;
  }
  if (vm.count("version")) {
    std::printf("evalgraph %s (plugin ABI %d.%d)\n", version_string(), EG_ABI_MAJOR, EG_ABI_MINOR);
#ifdef EVALGRAPH_WITH_MIMALLOC
    // Also keeps the link to mimalloc, which overrides malloc without being called by name.
    std::printf("allocator: mimalloc %d.%d.%d\n", mi_version() / 100, mi_version() / 10 % 10, mi_version() % 10);
#endif
    return kExitOk;
  }
  if (vm.count("commands-json")) {
    std::cout << cli::table_json().dump(2) << "\n";
    return kExitOk;
  }
  const cli::Command *command = vm.count("command") ? cli::find_command(vm["command"].as<std::string>()) : nullptr;
  if (vm.count("help") || !vm.count("command")) {
    std::cout << (command != nullptr && vm.count("help") ? cli::command_help(*command) : cli::full_help());
    return vm.count("help") ? kExitOk : kExitUsage;
  }
  const std::string cmd = vm["command"].as<std::string>();
  if (command == nullptr) {
    std::fprintf(stderr, "evalgraph: unknown command '%s'%s\n\n%s", cmd.c_str(),
                 did_you_mean(cmd, cli::command_names()).c_str(), cli::usage_text().c_str());
    return kExitUsage;
  }
  if (const std::string refused = cli::option_not_taken(*command, given); !refused.empty()) {
    std::fprintf(stderr, "%s\n", refused.c_str());
    return kExitUsage;
  }
  using Words = std::vector<std::string>;
  const Words args = vm.count("args") ? vm["args"].as<Words>() : Words{};
  const Words dirs = vm.count("plugin-dir") ? vm["plugin-dir"].as<Words>() : Words{};
  return run_handler(*command, {cmd, args, vm, dirs});
}
