// Catch2's main(), compiled once for every test executable (evalgraph_catch_main, tests/CMakeLists.txt): it is
// the slowest file of the tests to compile, about 15 s with g++ and 20 s under the sanitizers.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
