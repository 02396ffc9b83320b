// The host's run_info service (ABI 1.1) through the SDK's C++ Host: what the executor sets is what a plugin
// reads; a host table of ABI 1.0 (shorter, no run_info) gives an empty object instead of a crash.
#include <catch2/catch.hpp>

#include <cstddef>

#include "evalgraph/plugin.hpp"
#include "exec/host.h"

using nlohmann::json;

TEST_CASE("Host::run_info: the executor's answer, the LLM-only fallback, errors, and a 1.0 host", "[host][abi]") {
  evalgraph::HostServices services(nullptr, "", "");
  const eg_host *table = services.table();
  REQUIRE(table->abi_minor == EG_ABI_MINOR);
  REQUIRE(table->struct_size == sizeof(eg_host));
  REQUIRE(table->run_info != nullptr);
  evalgraph::Host host(table);

  // No run going on and no provider: only the (empty) LLM usage.
  CHECK(host.run_info() == json{{"llm", json::object()}});

  int asked = 0;
  services.set_run_info([&] {
    ++asked;
    return json{{"records", 3}, {"failed_records", 1}, {"llm", {{"judge", {{"calls", 3}}}}}};
  });
  eg_call c{};
  evalgraph::Call call(&c);
  json info = host.run_info(&call);
  CHECK(info["records"] == 3);
  CHECK(info["failed_records"] == 1);
  CHECK(info["llm"]["judge"]["calls"] == 3);
  CHECK(asked == 1);

  // A host of ABI 1.0: its table ends before run_info (whatever lies beyond is not read).
  eg_host old = *table;
  old.abi_minor = 0;
  old.struct_size = offsetof(eg_host, run_info);
  evalgraph::Host old_host(&old);
  CHECK_FALSE(old_host.offers(offsetof(eg_host, run_info)));
  CHECK(old_host.run_info(&call) == json::object());
  CHECK(asked == 1);  // not called
  CHECK(evalgraph::Host(nullptr).run_info() == json::object());

  // A failure inside the host is an error status, thrown as HostError by the C++ layer.
  services.set_run_info([]() -> json { throw std::runtime_error("no counts"); });
  CHECK_THROWS_AS(host.run_info(), evalgraph::HostError);
  eg_buffer b{};
  CHECK(table->run_info(table, nullptr, &b) == EG_ERROR);
  CHECK_THAT(evalgraph::take_host_buffer(b), Catch::Contains("no counts"));

  services.set_run_info(nullptr);  // the run ended
  CHECK(host.run_info() == json{{"llm", json::object()}});
}
