#pragma once
// Structural facts of a session, read deterministically from its tool calls and tool results: files
// created / modified / read (with what changed), commands and their errors, test runs, the to-do list.
// Used by the probe generator (expected answers) and by the anchored summary (its artifact list).
#include <optional>
#include <string>
#include <vector>

#include "compression/session.hpp"

namespace compression {

struct FileFacts {
  std::string path;
  bool created = false, modified = false, read = false, deleted = false;
  std::vector<std::string> changes;  // "replaced `a` with `b`", "created (12 lines)", ...
  std::string status() const;        // created | modified | deleted | read
};

struct CommandRun {
  std::size_t call_index = 0;  // the assistant message that ran it
  std::string command;
  bool has_result = false;
  bool failed = false;
  std::optional<int> exit_code;
  std::string output;
  bool is_test = false;
};

struct TodoItem {
  std::string content;
  std::string status;  // pending | in_progress | completed (as written)
};

struct Facts {
  std::vector<FileFacts> files;  // order of first appearance
  std::vector<CommandRun> commands;
  bool has_error = false;           // some tool result failed
  std::string first_error_line;     // the error line of the first failed tool result
  std::string first_error_command;  // the command (or "<tool> <path>") that produced it
  std::optional<std::size_t> last_test;  // index into commands of the last test run with a result
  std::vector<std::string> last_test_failures;  // failing-test lines of that run
  bool has_todos = false;
  std::vector<TodoItem> todos;  // the latest to-do list written
  std::string first_user_request;

  std::vector<const FileFacts *> with(bool FileFacts::*flag) const;
  std::vector<TodoItem> open_todos() const;
};

// Tool names are matched case-insensitively:
//   read: read_file, view, read, open_file, cat        create: create_file
//   write: write_file, write (created when the path was not seen before, else modified)
//   edit: edit_file, str_replace, str_replace_editor, edit, multiedit, apply_patch     delete: delete_file
//   command: run_command, bash, shell, execute_command, run     to-do list: todo_write, todowrite
// Paths come from "path", "file_path" or "filename"; commands from "command" or "cmd".
Facts extract_facts(const std::vector<Message> &msgs, std::size_t from, std::size_t to);
// The facts of one span merged into an existing file list (anchored summary): same rules.
void merge_file_facts(std::vector<FileFacts> &files, const std::vector<FileFacts> &more);

// The line of a failed tool output that names the error: the first line with "<Something>Error:",
// "<Something>Exception", "error:" or "error[", else the first with FAIL, fatal or panic, else the first
// non-empty line.
std::string error_line(const std::string &output);
// Lines of a test run's output that name failing tests (FAILED, FAIL:, --- FAIL, ✕, not ok), at most 8.
std::vector<std::string> failing_test_lines(const std::string &output);
bool is_test_command(const std::string &command);

}  // namespace compression
