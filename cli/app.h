// app.h — a pdl program's command line on CLI11 (Debian's libcli11-dev): the house setup of a
// CLI::App (-h/--help in the layout of usage.h, the error wording and exit codes of usage.h,
// an option given twice refused or the last one winning as the program has always done) and
// the validators the programs share. CLI11 is compiled only in the translation units that
// include this header: one per program (its options file) and app.cc.
//
// A program fills its options struct through a CommandLine:
//   cli::CommandLine cl({"pdl-tpcc", {"[options]"}, "A TPC-C-like ...", "exit status: ..."});
//   cl.app().add_option("--warehouses", o.warehouses, "warehouses")
//       ->type_name("N")->check(cli::integer(1, 1000))->capture_default_str();
//   if (int rc = cl.parse(argc, argv); rc >= 0) return rc;   // help printed, or usage error
// Option values name their metavariable with type_name (shown in --help); a default shows as
// "(default: X)" when the option has a default string (capture_default_str or default_str).
// Errors found after parsing go through cl.error(message) so they read the same.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/usage.h"

namespace pdl::cli {

enum class Repeats {
  kRefused,   // an option given twice is a usage error ("--size given twice")
  kLastWins,  // the last one counts (pdl-bench's and pdl-crash's documented behaviour)
};

struct Program {
  std::string name;                // "pdl-tpcc", "pdl format" (a command of the pdl tool)
  std::vector<std::string> usage;  // synopsis lines after the name: "[options]"
  std::string description;
  std::string footer;              // "exit status: ..."
  Repeats repeats = Repeats::kRefused;
};

class CommandLine {
 public:
  explicit CommandLine(Program program);
  CLI::App& app() { return app_; }

  // Parse argv (argv[0] is the program). -1: go on; kExitOk: --help was printed;
  // kExitUsage: the reason was printed.
  int parse(int argc, const char* const* argv);
  int parse(const std::vector<std::string>& words);  // the words after the program
  // A usage error found after parsing, worded like the parser's; returns kExitUsage.
  int error(std::string_view message) const { return usage_error(program_.name, message); }
  std::string help() const;

 private:
  int report(const CLI::ParseError& e);
  void apply_repeats();

  Program program_;
  CLI::App app_;
};

// Validators (they check the value as given; CLI11 converts it afterwards).
// A decimal integer in [lo, hi], digits only (no sign, no junk, no overflow).
CLI::Validator integer(uint64_t lo, uint64_t hi);
// A finite number in [lo, hi] (lo excluded if lo_open).
CLI::Validator number(double lo, double hi, bool lo_open = false);
// One of `allowed`.
CLI::Validator one_of(std::vector<std::string> allowed);
// A comma-separated list of `allowed` words, at least one: "unknown WHAT 'x' (a, b, c)".
CLI::Validator list_of(std::vector<std::string> allowed, std::string what);
// A non-empty value: "empty WHAT" ("file name").
CLI::Validator non_empty(std::string what);

// Strict unsigned decimal integer; false on junk, sign, overflow (integer()'s rule).
bool parse_decimal(const std::string& s, uint64_t* v);

}  // namespace pdl::cli
