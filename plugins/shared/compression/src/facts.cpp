#include "compression/facts.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace compression {

namespace {

enum class Op { none, read, create, write, edit, del, command, todo };

Op op_of(const std::string &name) {
  static const std::map<std::string, Op> ops{
      {"read_file", Op::read},   {"view", Op::read},          {"read", Op::read},     {"open_file", Op::read},
      {"cat", Op::read},         {"create_file", Op::create}, {"write_file", Op::write}, {"write", Op::write},
      {"edit_file", Op::edit},   {"str_replace", Op::edit},   {"str_replace_editor", Op::edit},
      {"edit", Op::edit},        {"multiedit", Op::edit},     {"apply_patch", Op::edit}, {"delete_file", Op::del},
      {"run_command", Op::command}, {"bash", Op::command},    {"shell", Op::command}, {"execute_command", Op::command},
      {"run", Op::command},      {"todo_write", Op::todo},    {"todowrite", Op::todo}};
  auto it = ops.find(lower(name));
  return it == ops.end() ? Op::none : it->second;
}

std::string arg(const json &a, std::initializer_list<const char *> keys) {
  for (const char *k : keys) {
    auto it = a.find(k);
    if (it != a.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

std::string first_line(const std::string &s) {
  std::string t = trim(s);
  auto nl = t.find('\n');
  return trim(nl == std::string::npos ? t : t.substr(0, nl));
}

std::size_t count_lines(const std::string &s) {
  if (s.empty()) return 0;
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')) + (s.back() == '\n' ? 0 : 1);
}

std::vector<std::string> lines_of(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

FileFacts &file(std::vector<FileFacts> &files, const std::string &path) {
  for (auto &f : files)
    if (f.path == path) return f;
  files.push_back({});
  files.back().path = path;
  return files.back();
}

void add_change(FileFacts &f, const std::string &c) {
  if (std::find(f.changes.begin(), f.changes.end(), c) == f.changes.end()) f.changes.push_back(c);
}

}  // namespace

std::string FileFacts::status() const {
  if (deleted) return "deleted";
  if (created) return "created";
  if (modified) return "modified";
  return "read";
}

std::vector<const FileFacts *> Facts::with(bool FileFacts::*flag) const {
  std::vector<const FileFacts *> out;
  for (const auto &f : files)
    if (f.*flag) out.push_back(&f);
  return out;
}

std::vector<TodoItem> Facts::open_todos() const {
  std::vector<TodoItem> out;
  for (const auto &t : todos)
    if (lower(t.status) != "completed" && lower(t.status) != "done") out.push_back(t);
  return out;
}

bool is_test_command(const std::string &command) {
  static const char *kw[] = {"pytest", "ctest", "go test", "cargo test", "npm test", "npm run test", "yarn test",
                             "pnpm test", "jest", "vitest", "mvn test", "gradle test", "make test", "make check",
                             "phpunit", "rspec", "unittest", "tox", "ninja test", "mocha", "dotnet test"};
  std::string c = lower(command);
  for (const char *k : kw)
    if (c.find(k) != std::string::npos) return true;
  return false;
}

std::string error_line(const std::string &output) {
  auto ls = lines_of(output);
  auto named_error = [](const std::string &l) {
    // "KeyError: ...", "TypeError: ...", "error: ...", "Error: ...", "error[E0308]: ...", "...Exception..."
    std::string low = lower(l);
    if (low.find("error:") != std::string::npos || low.find("error[") != std::string::npos) return true;
    return l.find("Exception") != std::string::npos;
  };
  for (const auto &l : ls)
    if (named_error(l)) return trim(l);
  for (const auto &l : ls) {
    std::string low = lower(l);
    if (l.find("FAIL") != std::string::npos || low.find("fatal") != std::string::npos || low.find("panic") != std::string::npos)
      return trim(l);
  }
  return first_line(output);
}

std::vector<std::string> failing_test_lines(const std::string &output) {
  std::vector<std::string> out;
  for (const auto &l : lines_of(output)) {
    std::string t = trim(l);
    bool fail = t.find("FAILED") != std::string::npos || t.rfind("FAIL:", 0) == 0 || t.rfind("FAIL ", 0) == 0 ||
                t.find("--- FAIL") != std::string::npos || t.find("✕") != std::string::npos || t.rfind("not ok", 0) == 0;
    // Summary lines ("=== 2 failed, 10 passed ===") are not test names.
    if (fail && t.rfind("===", 0) != 0 && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    if (out.size() == 8) break;
  }
  return out;
}

void merge_file_facts(std::vector<FileFacts> &files, const std::vector<FileFacts> &more) {
  for (const auto &m : more) {
    FileFacts &f = file(files, m.path);
    f.created = f.created || m.created;
    f.modified = (f.modified || m.modified) && !f.created;
    f.read = f.read || m.read;
    if (m.deleted) f.deleted = true;
    else if (m.created || m.modified) f.deleted = false;
    for (const auto &c : m.changes) add_change(f, c);
  }
}

namespace {

// The facts of a conversation, message by message: its tool calls (file changes, commands, todos) and the tool
// results that answer them (paired by tool_call_id, else in order).
class FactCollector {
 public:
  Facts f;

  void tool_call(const ToolCall &c, std::size_t i) {
    const Op op = op_of(c.name);
    const std::string path = arg(c.args, {"path", "file_path", "filename"});
    std::string label = c.name + (path.empty() ? "" : " " + path);
    if (op == Op::command)
      label = command(c, i);
    else if (op == Op::todo)
      todos(c);
    else if (!path.empty())
      file_change(op, c, path);
    if (!c.id.empty()) call_label_[c.id] = label;
    last_label_ = label;
  }

  void tool_result(const Message &m) {
    CommandRun *run = answered_command(m);
    if (run != nullptr) {
      run->has_result = true;
      run->failed = m.failed();
      run->exit_code = m.exit_code;
      run->output = m.content;
      if (run->is_test) {
        f.last_test = static_cast<std::size_t>(run - f.commands.data());
        f.last_test_failures = run->failed ? failing_test_lines(m.content) : std::vector<std::string>{};
      }
    }
    if (m.failed() && !f.has_error) {
      f.has_error = true;
      f.first_error_line = error_line(m.content);
      if (run != nullptr)
        f.first_error_command = run->command;
      else if (auto it = call_label_.find(m.tool_call_id); it != call_label_.end())
        f.first_error_command = it->second;
      else
        f.first_error_command = last_label_;
    }
  }

 private:
  // read, create, write, edit, delete of a file.
  void file_change(Op op, const ToolCall &c, const std::string &path) {
    if (op == Op::read) {
      file(f.files, path).read = true;
    } else if (op == Op::del) {
      file(f.files, path).deleted = true;
    } else if (op == Op::create) {
      FileFacts &ff = file(f.files, path);
      ff.created = true;
      ff.deleted = false;
      add_change(ff, "created (" + std::to_string(count_lines(arg(c.args, {"content", "file_text"}))) + " lines)");
    } else if (op == Op::write) {
      bool seen = std::any_of(f.files.begin(), f.files.end(), [&](const FileFacts &x) { return x.path == path; });
      FileFacts &ff = file(f.files, path);
      std::size_t n = count_lines(arg(c.args, {"content", "file_text"}));
      if (!seen) {
        ff.created = true;
        add_change(ff, "created (" + std::to_string(n) + " lines)");
      } else {
        if (!ff.created) ff.modified = true;
        add_change(ff, "rewritten (" + std::to_string(n) + " lines)");
      }
    } else if (op == Op::edit) {
      FileFacts &ff = file(f.files, path);
      if (!ff.created) ff.modified = true;
      std::string o = first_line(arg(c.args, {"old_str", "old_string", "old"}));
      std::string n = first_line(arg(c.args, {"new_str", "new_string", "new"}));
      std::string d = arg(c.args, {"description", "summary"});
      if (!d.empty())
        add_change(ff, trim(d));
      else if (!o.empty() || !n.empty())
        add_change(ff, "replaced `" + truncate_utf8(o, 60) + "` with `" + truncate_utf8(n, 60) + "`");
      else
        add_change(ff, "edited");
    }
  }

  // A command run, waiting for its result; returns its label (the command).
  std::string command(const ToolCall &c, std::size_t i) {
    CommandRun r;
    r.call_index = i;
    r.command = arg(c.args, {"command", "cmd"});
    r.is_test = is_test_command(r.command);
    f.commands.push_back(r);
    if (!c.id.empty())
      pending_[c.id] = f.commands.size() - 1;
    else
      unpaired_.push_back(f.commands.size() - 1);
    return r.command;
  }

  // The todo list, as the last call that wrote it left it.
  void todos(const ToolCall &c) {
    auto it = c.args.find("todos");
    if (it == c.args.end() || !it->is_array()) return;
    f.has_todos = true;
    f.todos.clear();
    for (const auto &t : *it)
      if (t.is_object()) f.todos.push_back({t.value("content", ""), t.value("status", "pending")});
  }

  // The command a tool result answers: by its tool_call_id, or without ids the oldest one waiting.
  CommandRun *answered_command(const Message &m) {
    if (auto it = pending_.find(m.tool_call_id); !m.tool_call_id.empty() && it != pending_.end()) {
      CommandRun *run = &f.commands[it->second];
      pending_.erase(it);
      return run;
    }
    if (m.tool_call_id.empty() && !unpaired_.empty()) {
      CommandRun *run = &f.commands[unpaired_.front()];
      unpaired_.erase(unpaired_.begin());
      return run;
    }
    return nullptr;
  }

  std::map<std::string, std::size_t> pending_;     // tool_call_id -> index into f.commands
  std::vector<std::size_t> unpaired_;              // commands waiting for a result without ids
  std::map<std::string, std::string> call_label_;  // tool_call_id -> "tool path" (for non-command errors)
  std::string last_label_;
};

}  // namespace

Facts extract_facts(const std::vector<Message> &msgs, std::size_t from, std::size_t to) {
  FactCollector fc;
  to = std::min(to, msgs.size());
  for (std::size_t i = from; i < to; ++i) {
    const Message &m = msgs[i];
    if (m.role == "user" && fc.f.first_user_request.empty() && !trim(m.content).empty())
      fc.f.first_user_request = trim(m.content);
    for (const auto &c : m.tool_calls) fc.tool_call(c, i);
    if (m.role == "tool") fc.tool_result(m);
  }
  return std::move(fc.f);
}

}  // namespace compression
