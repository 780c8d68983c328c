// require_status.h — Catch2 assertions on a pdl::Status (header-only, tests only).
//
// REQUIRE_OK(expr) and REQUIRE_ERR(expr, errc) evaluate `expr` once and, when it fails the
// check, report the Status's text with the failure.
#pragma once

#include <catch2/catch.hpp>

#include "flash/common/status.h"

#define REQUIRE_OK(expr)              \
  do {                                \
    const ::pdl::Status st_ = (expr); \
    INFO(st_.to_string());            \
    REQUIRE(st_.is_ok());             \
  } while (0)

#define REQUIRE_ERR(expr, errc)       \
  do {                                \
    const ::pdl::Status st_ = (expr); \
    INFO(st_.to_string());            \
    REQUIRE(st_.is(errc));            \
  } while (0)
