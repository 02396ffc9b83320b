// The command table (cli/commands.cpp) against what repeats it: docs/command-line.md, `evalgraph --help` and
// `evalgraph CMD --help`, and the refusal of an option a command does not take. The table comes from the binary
// itself (`evalgraph --commands-json`, a hidden option), not compiled into this test: its handlers live in
// cli/main.cpp, and the binary is what users run, so what is checked is what they get.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "test_support.h"
#include "util/exit_codes.h"

using nlohmann::json;
using Names = std::set<std::string>;

namespace {

json command_table() {
  auto r = testsupport::run_cmd(std::string(EVALGRAPH_EXE) + " --commands-json 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.output);
}

Names names_of(const json &list) {
  Names s;
  for (const auto &n : list) s.insert(n.get<std::string>());
  return s;
}

// Every `--name` of a line (a long option: two dashes after a non-word character, then a letter).
Names long_options(const std::string &line) {
  static const std::regex option(R"((^|[^-\w])--([a-z][a-z0-9-]*))");
  Names s;
  for (std::sregex_iterator i(line.begin(), line.end(), option), end; i != end; ++i) s.insert((*i)[2].str());
  return s;
}

// docs/command-line.md, read by its structure: a "### `evalgraph NAME`" section per command, holding its forms (the
// lines of its code block) and one "Options:" paragraph; the "Global options:" line; the "## Options" table.
struct Doc {
  struct Section {
    std::vector<std::string> lines;
    Names options;
    bool options_paragraph = false;
  };
  std::map<std::string, Section> commands;
  Names global_options;
  Names table_options;       // the first cell of each row of the "## Options" table
  Names mentioned_options;   // every --name anywhere
  Names mentioned_commands;  // every `evalgraph WORD` in code and in headings
};

Doc read_doc() {
  std::ifstream in(std::string(REPO_DIR) + "/docs/command-line.md");
  REQUIRE(in.good());
  static const std::regex heading(R"(^### `evalgraph ([a-z][a-z-]*)`)");
  static const std::regex in_code(R"((^|`)evalgraph ([a-z][a-z-]*))");
  Doc doc;
  std::string line, section, top;
  bool code = false, in_options = false;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) code = !code;
    if (!code && line.rfind("## ", 0) == 0) top = line, section.clear();
    if (!code && std::regex_search(line, m, heading)) section = m[1].str(), doc.commands[section];
    for (std::sregex_iterator i(line.begin(), line.end(), in_code), end; i != end; ++i)
      if (code || (*i)[1].length() > 0) doc.mentioned_commands.insert((*i)[2].str());
    const Names options = long_options(line);
    doc.mentioned_options.insert(options.begin(), options.end());
    if (line.rfind("Global options", 0) == 0) doc.global_options = options;
    if (top == "## Options" && line.rfind("| `", 0) == 0)
      for (const auto &o : long_options(line.substr(0, line.find(" | ", 1)))) doc.table_options.insert(o);
    if (section.empty()) continue;
    auto &s = doc.commands[section];
    s.lines.push_back(line);
    if (line.rfind("Options:", 0) == 0)
      in_options = s.options_paragraph = true;
    else if (line.empty())
      in_options = false;
    if (in_options) s.options.insert(options.begin(), options.end());
  }
  return doc;
}

bool has_line_starting(const std::vector<std::string> &lines, const std::string &start) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string &l) { return l.rfind(start, 0) == 0; });
}

}  // namespace

TEST_CASE("command table: each command's options are defined, each option is taken by some command", "[cli]") {
  const json t = command_table();
  const Names defined = names_of(t["options"]), global = names_of(t["global_options"]);
  Names taken = global;
  for (const auto &c : t["commands"]) {
    INFO("command " << c["name"]);
    CHECK(!c["forms"].empty());
    for (const auto &o : c["options"]) {
      INFO("option --" << o.get<std::string>());
      CHECK(defined.count(o) == 1);
      CHECK(global.count(o) == 0);  // a global option is not repeated in a command
      taken.insert(o.get<std::string>());
    }
  }
  CHECK(taken == defined);
}

TEST_CASE("command table: docs/command-line.md documents every command with its forms and options", "[cli]") {
  const json t = command_table();
  const Doc doc = read_doc();
  Names table_commands;
  for (const auto &c : t["commands"]) {
    const std::string name = c["name"];
    table_commands.insert(name);
    INFO("command " << name << ": its section \"### `evalgraph " << name << "`\" in docs/command-line.md");
    REQUIRE(doc.commands.count(name) == 1);
    const auto &section = doc.commands.at(name);
    for (const auto &f : c["forms"]) {
      const std::string form = "evalgraph " + name + " " + f["synopsis"].get<std::string>();
      INFO("the form: " << form);
      CHECK(has_line_starting(section.lines, form));
    }
    CHECK(section.options_paragraph);
    CHECK(section.options == names_of(c["options"]));  // what the doc names and the command does not take, too
  }
  Names doc_commands;
  for (const auto &entry : doc.commands) doc_commands.insert(entry.first);
  CHECK(doc_commands == table_commands);
  CHECK(doc.global_options == names_of(t["global_options"]));
  CHECK(doc.table_options == names_of(t["options"]));
  // Nothing the table lacks, anywhere on the page.
  for (const auto &o : doc.mentioned_options) {
    INFO("docs/command-line.md names --" << o);
    CHECK(names_of(t["options"]).count(o) == 1);
  }
  for (const auto &c : doc.mentioned_commands) {
    INFO("docs/command-line.md names `evalgraph " << c << "`");
    CHECK(table_commands.count(c) == 1);
  }
}

TEST_CASE("command table: an option the command does not take exits 2, naming the commands that take it", "[cli]") {
  auto r = testsupport::run_cmd(std::string(EVALGRAPH_EXE) + " plugins --max-cost 5 2>&1");
  INFO(r.output);
  CHECK(r.exit_code == evalgraph::exit_code::usage);
  CHECK_THAT(r.output, Catch::Contains("evalgraph: --max-cost is not an option of 'plugins' (it is an option of: run); "
                                       "see evalgraph plugins --help"));
  CHECK_THAT(r.output, !Catch::Contains("NODE TYPE"));  // nothing ran
  // A short name is named by its long one; several commands take --json.
  auto j = testsupport::run_cmd(std::string(EVALGRAPH_EXE) + " validate x.yaml --json -j 2 2>&1");
  INFO(j.output);
  CHECK(j.exit_code == evalgraph::exit_code::usage);
  CHECK_THAT(j.output, Catch::Contains("--json is not an option of 'validate' (it is an option of: estimate, plugins, "
                                       "compare, agree)"));
  // The global ones go with every command.
  auto g = testsupport::run_cmd(std::string(EVALGRAPH_EXE) + " plugins -q --plugin-dir /nonexistent --json 2>&1");
  INFO(g.output);
  CHECK(g.exit_code == 0);
}

TEST_CASE("command table: evalgraph run --help lists run's options and no other command's", "[cli]") {
  const json t = command_table();
  auto r = testsupport::run_cmd(std::string(EVALGRAPH_EXE) + " run --help 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (const auto &c : t["commands"]) {
    if (c["name"] != "run") continue;
    for (const auto &f : c["forms"])
      CHECK_THAT(r.output, Catch::Contains("evalgraph run " + f["synopsis"].get<std::string>()));
    for (const auto &o : c["options"]) CHECK_THAT(r.output, Catch::Contains("--" + o.get<std::string>()));
  }
  for (const auto &o : t["global_options"]) CHECK_THAT(r.output, Catch::Contains("--" + o.get<std::string>()));
  CHECK_THAT(r.output, !Catch::Contains("--fail-if-worse"));
  CHECK_THAT(r.output, !Catch::Contains("--labels"));
  CHECK_THAT(r.output, !Catch::Contains("evalgraph compare"));
  // The whole help: every command, every option.
  auto h = testsupport::run_cmd(std::string(EVALGRAPH_EXE) + " --help 2>&1");
  REQUIRE(h.exit_code == 0);
  for (const auto &c : t["commands"])
    CHECK_THAT(h.output, Catch::Contains("evalgraph " + c["name"].get<std::string>() + " "));
  for (const auto &o : t["options"]) CHECK_THAT(h.output, Catch::Contains("--" + o.get<std::string>()));
}
