#include <catch2/catch.hpp>

#include "summary.hpp"

using nlohmann::json;

TEST_CASE("summary: per-scope aggregation, flags and the cross-scope warning", "[summary]") {
  ksodi::SummaryAggregator agg({});
  agg.add(json::parse(R"({"id":"u1","context_scope_id":"A","s0":{"S0":0.2,"F":0.5,"G_str":0.1,"R_red":0},
    "k0":{"K0":1.0,"context_map":{"Z":true,"R":true,"D":true,"C":true,"E":true,"T":true}},
    "o0":{"O0":0.5,"A_ret":0.6,"T":0.25,"U":0.0}})"));
  agg.add(json::parse(R"({"id":"u2","context_scope_id":"A","s0":{"S0":0.6,"F":1,"G_str":0.5,"R_red":0.2},
    "k0":{"K0":0.1667,"context_map":{"Z":true,"R":false,"D":false,"C":false,"E":false,"T":false}},
    "o0":{"O0":null,"A_ret":null,"T":0,"U":null}})"));
  agg.add(json::parse(R"({"id":7,"context_scope_id":"B","_errors":{"o0":"boom"},"s0":{"S0":0.3}})"));
  const auto &a = agg.scopes().at("A");
  CHECK(a.n == 2);
  CHECK(a.stats[0].mean() == Approx(0.4));
  CHECK(a.stats[0].min == Approx(0.2));
  CHECK(a.stats[0].max == Approx(0.6));
  CHECK(a.stats[5].mean() == Approx(1.0));  // K0.Z share
  CHECK(a.stats[6].mean() == Approx(0.5));  // K0.R share
  CHECK(a.stats[11].n == 1);                       // O0 null is not averaged
  CHECK(a.not_interpretable.total == 1);
  CHECK(a.not_interpretable.ids == std::vector<std::string>{"u2"});
  CHECK(a.o0_null.total == 1);
  CHECK(agg.scopes().at("B").failed.ids == std::vector<std::string>{"7 (o0)"});
  std::string md = agg.markdown();
  CHECK(md.find("## Warning") != std::string::npos);
  CHECK(md.find("| S0 | 2 | 0.400 | 0.200 | 0.600 |") != std::string::npos);
  CHECK(md.find("## Scope `B`") != std::string::npos);
  ksodi::SummaryAggregator one({});
  one.add(json::parse(R"({"id":"x","context_scope_id":"A"})"));
  CHECK(one.markdown().find("## Warning") == std::string::npos);
}
