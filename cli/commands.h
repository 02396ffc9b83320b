// The commands of `evalgraph`, stated once (commands.cpp): each one's name, its forms (arguments and a one-line
// summary), the options it takes and the function that does it. The usage text, `evalgraph CMD --help`, the
// dispatch, did-you-mean and the refusal of an option a command does not take all come from this table; the
// options themselves (value, default, help text) are defined once beside it. tests/engine/test_command_table.cpp
// holds docs/command-line.md to the table (through the hidden `evalgraph --commands-json`).
#pragma once

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace evalgraph::cli {

namespace po = boost::program_options;

// What a command's handler gets: the words after the command, the parsed options and the --plugin-dir folders.
struct Invocation {
  std::string command;
  std::vector<std::string> args;
  const po::variables_map &vm;
  std::vector<std::string> plugin_dirs;
};

using Handler = int (*)(const Invocation &);

// One way to call a command: its arguments as the usage shows them, and what it does.
struct Form {
  const char *synopsis;
  const char *summary;
};

struct Command {
  const char *name;
  std::vector<Form> forms;
  std::vector<const char *> options;  // long names of the options it takes, besides the global ones
  Handler handler;
};

// Every command, in the order of the usage text.
const std::vector<Command> &commands();
const Command *find_command(const std::string &name);  // nullptr: no such command
std::vector<std::string> command_names();

// The options every command takes (long names).
const std::vector<std::string> &global_options();

// Every option (the global ones, then the others), and the hidden words of the command line: the command, its
// arguments and --commands-json.
po::options_description all_options();
po::options_description hidden_options();

// `evalgraph --help`: every command's forms, the exit codes, every option with the commands that take it.
std::string full_help();
// `evalgraph CMD --help`: its forms, its options, the global ones.
std::string command_help(const Command &c);
// A usage error's hint: the command's forms and where the rest is.
std::string command_usage(const Command &c);
std::string command_usage(const std::string &name);
// The usage lines of every command and the exit codes (the head of full_help, and what an error before any
// command shows).
std::string usage_text();

// The message for the first of the given options (long names, in command-line order) that `c` does not take;
// "" when it takes them all.
std::string option_not_taken(const Command &c, const std::vector<std::string> &given);

// The table as JSON: {"commands": [{name, forms: [{synopsis, summary}], options}], "global_options", "options"}.
nlohmann::json table_json();

// The handlers (cli/main.cpp).
int cmd_run(const Invocation &in);
int cmd_merge(const Invocation &in);
int cmd_cache(const Invocation &in);
int cmd_validate(const Invocation &in);
int cmd_graph(const Invocation &in);
int cmd_estimate(const Invocation &in);
int cmd_plugins(const Invocation &in);
int cmd_compare(const Invocation &in);
int cmd_agree(const Invocation &in);
int cmd_combine(const Invocation &in);
int cmd_create_dataset(const Invocation &in);

}  // namespace evalgraph::cli
