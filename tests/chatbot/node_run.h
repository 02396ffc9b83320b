// Runs a node type through its C ABI, as a host does: created with parameters "{}", one input per call, the
// answer's text (output or error) returned after its status is checked, destroyed at the end.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "evalgraph/plugin.h"

struct NodeRun {
  const eg_node_type &type;
  void *inst = nullptr;
  explicit NodeRun(const eg_node_type &t) : type(t) {
    eg_buffer err{};
    REQUIRE(t.create(nullptr, "{}", &inst, &err) == EG_OK);
  }
  ~NodeRun() { type.destroy(inst); }
  NodeRun(const NodeRun &) = delete;
  NodeRun &operator=(const NodeRun &) = delete;

  std::string operator()(const std::string &in, eg_status want) const {
    eg_buffer out{};
    CHECK(type.process(inst, nullptr, in.data(), in.size(), &out) == want);
    std::string s(out.data != nullptr ? out.data : "", out.size);
    if (out.release != nullptr) out.release(&out);
    return s;
  }
};
