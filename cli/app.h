// app.h — a pdl program's command line on CLI11 (Debian's libcli11-dev): the house setup of a
// CLI::App (-h/--help in the layout of usage.h, the error wording and exit codes of usage.h,
// an option given twice refused or the last one winning as the program has always done) and
// the validators the programs share. This header does not include CLI11: App, Option and
// Validator below are a thin non-template layer over CLI11's classes of the same names, and
// app.cc is the only translation unit that compiles CLI11 (its header-only templates and the
// validators it defines in every file that includes it cost 10-20 s of compile time per file).
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
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/usage.h"

namespace CLI {
class App;
class Option;
class ParseError;
class Validator;
}  // namespace CLI

namespace pdl::cli {

// A check of an option's value as given: "" if it passes, else the reason (CLI::Validator).
class Validator {
 public:
  using Check = std::function<std::string(std::string&)>;
  Validator(Check check, std::string description);
  std::string operator()(std::string& value) const;
  const CLI::Validator& get() const { return *v_; }

 private:
  friend Validator is_member(std::initializer_list<const char*> values);
  friend Validator is_member(std::initializer_list<int> values);
  friend Validator existing_directory();
  explicit Validator(std::shared_ptr<const CLI::Validator> v) : v_(std::move(v)) {}
  std::shared_ptr<const CLI::Validator> v_;
};

// One option of an App: the CLI::Option settings the programs use, each returning the option.
class Option {
 public:
  explicit Option(CLI::Option* o) : o_(o) {}
  Option* type_name(std::string name);
  Option* check(const Validator& v);
  Option* capture_default_str();
  Option* default_str(std::string value);
  Option* group(std::string name);  // "" hides the option from --help
  Option* required();
  Option* excludes(Option* other);
  size_t count() const;  // times given

 private:
  CLI::Option* o_;
};

// The options of a CommandLine (CLI::App's add_option and add_flag for the types in use).
class App {
 public:
  explicit App(CLI::App* app) : app_(app) {}
  // CLI11's add_option for a variable of type T: instantiated in app.cc for std::string,
  // std::vector<std::string>, uint64_t, uint32_t, int64_t, int and double (another type links
  // once it is added to that list).
  template <typename T>
  Option* add_option(std::string name, T& v, std::string help = "");
  Option* add_flag(std::string name, bool& v, std::string help = "");
  Option* add_flag(std::string name, const std::string& help);  // no variable: see count()
  size_t count(std::string name) const;  // times the option was given

 private:
  Option* keep(CLI::Option* o);
  CLI::App* app_;
  std::vector<std::unique_ptr<Option>> options_;
};

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
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;
  App& app() { return front_; }

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
  std::unique_ptr<CLI::App> app_;
  App front_;
};

// Validators (they check the value as given; CLI11 converts it afterwards).
// A decimal integer in [lo, hi], digits only (no sign, no junk, no overflow).
Validator integer(uint64_t lo, uint64_t hi);
// A finite number in [lo, hi] (lo excluded if lo_open).
Validator number(double lo, double hi, bool lo_open = false);
// One of `allowed`.
Validator one_of(std::vector<std::string> allowed);
// A comma-separated list of `allowed` words, at least one: "unknown WHAT 'x' (a, b, c)".
Validator list_of(std::vector<std::string> allowed, std::string what);
// A non-empty value: "empty WHAT" ("file name").
Validator non_empty(std::string what);
// CLI11's own checks, in their wording: CLI::IsMember(values), and CLI::ExistingDirectory
// with no description.
Validator is_member(std::initializer_list<const char*> values);
Validator is_member(std::initializer_list<int> values);
Validator existing_directory();

// Strict unsigned decimal integer; false on junk, sign, overflow (integer()'s rule).
bool parse_decimal(const std::string& s, uint64_t* v);

}  // namespace pdl::cli
