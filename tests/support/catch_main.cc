// catch_main.cc — the one translation unit that compiles Catch2's main (it is slow to build).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
