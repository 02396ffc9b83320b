// sink.jsonl and sink.csv, loaded from their shared libraries through the C ABI as the host does.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "evalgraph/plugin.h"
#include "io/dataset.h"
#include "test_util.h"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// One loaded plugin library; the handle stays open for the whole test run.
const eg_node_type &load_type(const char *lib, const char *type_name) {
  void *handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) FAIL("dlopen " << lib << ": " << dlerror());
  auto entry = reinterpret_cast<eg_plugin_entry_fn>(dlsym(handle, EG_ENTRY_SYMBOL));
  REQUIRE(entry != nullptr);
  const eg_plugin *plugin = entry();
  REQUIRE(plugin != nullptr);
  REQUIRE(plugin->magic == EG_MAGIC);
  REQUIRE(plugin->abi_major == EG_ABI_MAJOR);
  REQUIRE(plugin->node_type_size == sizeof(eg_node_type));
  for (std::size_t i = 0; i < plugin->node_type_count; ++i)
    if (std::strcmp(plugin->node_types[i].name, type_name) == 0) return plugin->node_types[i];
  FAIL("no node type " << type_name << " in " << lib);
  throw std::logic_error("unreachable");
}

std::string take(eg_buffer &b) {
  std::string s = b.data != nullptr ? std::string(b.data, b.size) : std::string();
  if (b.release != nullptr) b.release(&b);
  return s;
}

// A node instance driven through the C ABI.
class Instance {
 public:
  Instance(const eg_node_type &t, const json &params) : t_(t) {
    eg_buffer err{};
    std::string p = params.dump();
    status_ = t_.create(nullptr, p.c_str(), &inst_, &err);
    error_ = take(err);
  }
  ~Instance() {
    if (inst_ != nullptr) t_.destroy(inst_);
  }
  Instance(const Instance &) = delete;
  Instance &operator=(const Instance &) = delete;
  eg_status create_status() const { return status_; }
  const std::string &create_error() const { return error_; }
  void process(const std::string &record) {
    eg_buffer out{};
    eg_status s = t_.process(inst_, nullptr, record.data(), record.size(), &out);
    std::string msg = take(out);
    INFO(msg);
    REQUIRE(s == EG_OK);
  }
  eg_status process_status(const std::string &record, std::string &msg) {
    eg_buffer out{};
    eg_status s = t_.process(inst_, nullptr, record.data(), record.size(), &out);
    msg = take(out);
    return s;
  }
  json finish() {
    REQUIRE(t_.finish != nullptr);
    eg_buffer out{};
    eg_status s = t_.finish(inst_, nullptr, &out);
    std::string text = take(out);
    INFO(text);
    REQUIRE(s == EG_OK);
    return json::parse(text);
  }
  void destroy() {
    t_.destroy(inst_);
    inst_ = nullptr;
  }

 private:
  const eg_node_type &t_;
  void *inst_ = nullptr;
  eg_status status_;
  std::string error_;
};

const eg_node_type &jsonl_type() { return load_type(EVALGRAPH_SINK_JSONL_PATH, "sink.jsonl"); }
const eg_node_type &csv_type() { return load_type(EVALGRAPH_SINK_CSV_PATH, "sink.csv"); }

std::vector<std::string> files_in(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) names.push_back(fs::relative(e.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<json> read_records(const fs::path &file, const json &options = json::object()) {
  auto reader = evalgraph::io::open_dataset(file, "", options);
  std::vector<json> out;
  json rec;
  while (reader->next(rec)) out.push_back(rec);
  return out;
}

}  // namespace

TEST_CASE("sinks: descriptors and parameter schemas", "[io][sink]") {
  for (const eg_node_type *t : {&jsonl_type(), &csv_type()}) {
    CHECK(t->kind == EG_KIND_SINK);
    CHECK(t->struct_size == sizeof(eg_node_type));
    CHECK((t->flags & EG_FLAG_THREAD_SAFE) == 0);
    REQUIRE(t->params_schema != nullptr);
    json schema = json::parse(t->params_schema);
    CHECK(schema["additionalProperties"] == false);
    CHECK(schema["patternProperties"].contains("^_"));
    for (const auto &[name, prop] : schema["properties"].items()) CHECK(prop.contains("description"));
    CHECK(schema["properties"].contains("file"));
  }
}

TEST_CASE("sink.jsonl writes one line per record, under its final name only after finish", "[io][sink]") {
  iotest::TempDir dir;
  Instance sink(jsonl_type(), {{"file", "out/run.jsonl"}, {"_output_dir", dir.path().string()}});
  REQUIRE(sink.create_status() == EG_OK);
  const std::vector<std::string> records = {R"({"id":1,"q":"a"})", R"({"id":2,"judge":{"score":4}})",
                                            R"({"id":3,"text":"line\nbreak é"})"};
  for (const auto &r : records) sink.process(r);
  sink.process("{\n  \"id\": 4,\n  \"pretty\": true\n}\n");  // a raw line break must not split the record

  CHECK(files_in(dir.path()) == std::vector<std::string>{"out/run.jsonl.partial"});
  json summary = sink.finish();
  CHECK(summary == json{{"files", {"out/run.jsonl"}}, {"records", 4}});
  CHECK(files_in(dir.path()) == std::vector<std::string>{"out/run.jsonl"});
  CHECK(iotest::read_file(dir / "out/run.jsonl") == records[0] + "\n" + records[1] + "\n" + records[2] + "\n" +
                                                        R"({"id":4,"pretty":true})" + "\n");
  auto back = read_records(dir / "out/run.jsonl");
  REQUIRE(back.size() == 4);
  CHECK(back[2]["text"] == "line\nbreak é");
}

TEST_CASE("sink.jsonl: default file name, parameter errors, and no final file without finish", "[io][sink]") {
  iotest::TempDir dir;
  {
    Instance sink(jsonl_type(), {{"_output_dir", dir.path().string()}, {"_run_id", "x"}});
    REQUIRE(sink.create_status() == EG_OK);
    sink.process(R"({"a":1})");
  }  // destroyed without finish(): a crashed or cancelled run
  CHECK(files_in(dir.path()) == std::vector<std::string>{"records.jsonl.partial"});

  Instance unknown(jsonl_type(), {{"fiel", "x.jsonl"}, {"_output_dir", dir.path().string()}});
  CHECK(unknown.create_status() == EG_ERROR);
  CHECK_THAT(unknown.create_error(), Catch::Contains("unknown parameter 'fiel'"));
  Instance escape(jsonl_type(), {{"file", "../x.jsonl"}, {"_output_dir", dir.path().string()}});
  CHECK(escape.create_status() == EG_ERROR);
  CHECK_THAT(escape.create_error(), Catch::Contains("relative path inside the output directory"));
  Instance no_dir(jsonl_type(), json::object());
  CHECK(no_dir.create_status() == EG_ERROR);
  CHECK_THAT(no_dir.create_error(), Catch::Contains("_output_dir"));
}

TEST_CASE("sink.csv: union of columns in first-seen order, short rows padded", "[io][sink]") {
  iotest::TempDir dir;
  Instance sink(csv_type(), {{"_output_dir", dir.path().string()}});
  REQUIRE(sink.create_status() == EG_OK);
  sink.process(R"({"id":1,"question":"plain","_meta":{"record_index":0}})");
  sink.process(R"({"id":2,"question":"with, comma","judge":{"score":4,"reason":"two\nlines \"quoted\"","raw":{"x":[1]}}})");
  sink.process(R"({"id":3,"question":null,"tags":["a","b"],"_meta":{"record_index":2}})");
  CHECK(files_in(dir.path()) == std::vector<std::string>{"records.csv.partial", "records.csv.partial.body"});

  json summary = sink.finish();
  CHECK(summary["files"] == json::array({"records.csv"}));
  CHECK(summary["records"] == 3);
  CHECK(files_in(dir.path()) == std::vector<std::string>{"records.csv"});

  const std::string text = iotest::read_file(dir / "records.csv");
  CHECK(text.substr(0, text.find('\n')) == "id,question,_meta.record_index,judge.score,judge.reason,judge.raw,tags");
  auto reader = evalgraph::io::open_dataset(dir / "records.csv", "", json::object());
  std::vector<json> rows;
  json rec;
  while (reader->next(rec)) rows.push_back(rec);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == json{{"id", "1"}, {"question", "plain"}, {"_meta.record_index", "0"}, {"judge.score", ""},
                        {"judge.reason", ""}, {"judge.raw", ""}, {"tags", ""}});
  CHECK(rows[1]["question"] == "with, comma");
  CHECK(rows[1]["judge.reason"] == "two\nlines \"quoted\"");
  CHECK(rows[1]["judge.raw"] == R"({"x":[1]})");
  CHECK(rows[1]["_meta.record_index"] == "");
  CHECK(rows[2]["question"] == "");
  CHECK(rows[2]["tags"] == R"(["a","b"])");
  CHECK(rows[2]["_meta.record_index"] == "2");
}

TEST_CASE("sink.csv: explicit columns, separator and BOM", "[io][sink]") {
  iotest::TempDir dir;
  Instance sink(csv_type(), {{"file", "sub/scores.csv"},
                             {"separator", ";"},
                             {"bom", true},
                             {"columns", {"judge.score", "id", "absent"}},
                             {"_output_dir", dir.path().string()}});
  REQUIRE(sink.create_status() == EG_OK);
  sink.process(R"({"id":"a;b","judge":{"score":1.5,"reason":"dropped"},"other":1})");
  sink.process(R"({"id":"c"})");
  CHECK(files_in(dir.path()) == std::vector<std::string>{"sub/scores.csv.partial"});
  json summary = sink.finish();
  CHECK(summary["files"] == json::array({"sub/scores.csv"}));
  CHECK(iotest::read_file(dir / "sub/scores.csv") == "\xEF\xBB\xBFjudge.score;id;absent\n1.5;\"a;b\";\n;c;\n");
}

TEST_CASE("sink.csv: parameter and input errors", "[io][sink]") {
  iotest::TempDir dir;
  Instance bad_sep(csv_type(), {{"separator", "::"}, {"_output_dir", dir.path().string()}});
  CHECK(bad_sep.create_status() == EG_ERROR);
  CHECK_THAT(bad_sep.create_error(), Catch::Contains("separator"));
  Instance bad_key(csv_type(), {{"colums", {"a"}}, {"_output_dir", dir.path().string()}});
  CHECK(bad_key.create_status() == EG_ERROR);
  CHECK_THAT(bad_key.create_error(), Catch::Contains("unknown parameter 'colums'"));

  Instance sink(csv_type(), {{"separator", "tab"}, {"_output_dir", dir.path().string()}});
  REQUIRE(sink.create_status() == EG_OK);
  std::string msg;
  CHECK(sink.process_status("{not json", msg) == EG_INVALID_INPUT);
  CHECK_THAT(msg, Catch::Contains("not valid JSON"));
  sink.process(R"({"a":"x\ty","b":""})");
  sink.process(R"({})");
  sink.finish();
  CHECK(iotest::read_file(dir / "records.csv") == "a\tb\n\"x\ty\"\t\n\t\n");
}
