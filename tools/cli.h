// cli.h — what every command of the `pdl` tool shares: exit codes, error messages, the option
// parser and the Command table entry.
//
// Each command is one Command (name, arguments, help text, options, run function) defined in
// its own cmd_*.cc; main (pdl.cc) parses the command line against it, so every command gets
// `--help`, the same error format and the same exit codes:
//   0 ok · 1 problem found (fsck) · 2 usage error · 3 image error (missing, not an image,
//   corrupt, unreadable; also a failed write to stdout) · 4 image in use by another process.
// Errors go to stderr as "pdl: <command>: <message>" (a usage error adds the line
// "try 'pdl <command> --help'", cli/usage.h); results go to stdout.
//
// Invariants: run() returns one of the exit codes above and has printed the reason for any
// nonzero one; it never lets an exception out (main catches all the same, as a last resort).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/usage.h"
#include "flash/common/status.h"
#include "flash/device/geometry.h"

namespace pdl::tool {

enum Exit : int {  // cli/usage.h's, the same in every program
  kExitOk = cli::kExitOk,
  kExitProblem = cli::kExitFailed,
  kExitUsage = cli::kExitUsage,
  kExitImage = cli::kExitImage,
  kExitBusy = cli::kExitBusy,
};
extern const char kExitStatus[];  // the exit status paragraph of every --help

struct Option {
  const char* name;   // long name without dashes: "json" for --json
  char alias;         // short form ('l' for -l), or 0
  const char* value;  // metavariable ("N") if the option takes a value, nullptr for a flag
  const char* help;
};

// A parsed command line. Options are stored under their long name; flags map to "".
struct Args {
  std::vector<std::string> pos;
  std::map<std::string, std::string> opt;
  bool has(const std::string& name) const { return opt.count(name) != 0; }
  const std::string& get(const std::string& name) const { return opt.at(name); }
};

struct Command {
  const char* name;
  const char* args;     // synopsis after the command name: "IMAGE [--json]"
  const char* summary;  // one line, for `pdl --help`
  const char* details;  // text for `pdl CMD --help` (may be "")
  std::vector<Option> options;
  size_t min_pos, max_pos;  // positional arguments accepted
  int (*run)(const Command&, const Args&);
};

// Print "pdl: <cmd>: <msg>" to stderr and return `code`.
int fail(const Command& cmd, int code, const std::string& msg);
// A usage error: the message, then "try 'pdl CMD --help'"; returns kExitUsage.
int usage_error(const Command& cmd, const std::string& msg);
// Report a Status from opening or reading an image: kBusy -> 4, anything else -> 3.
int fail_status(const Command& cmd, const Status& st);

// Parse argv (the words after the command name) with CLI11. "--opt value", "--opt=value",
// "-l", and "--" (end of options) are understood; options may come before or after
// positionals; an option given twice is refused. On --help / -h prints the help and sets
// *help. Returns kExitOk, or kExitUsage after printing the reason.
int parse_args(const Command& cmd, int argc, char** argv, Args* out, bool* help);
void print_help(const Command& cmd, FILE* out);

// Strict unsigned decimal (or 0x hex) integer; false on junk, sign or overflow.
bool parse_u64(const std::string& s, uint64_t* v);
// printf into a std::string.
std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// "ppa 130 (block 2, page 2)"
std::string ppa_str(Ppa ppa, uint32_t pages_per_block);
// Local time of seconds since the epoch: "2025-11-22 06:11:03", with " +0100" if `zone`.
std::string time_str(uint64_t seconds, bool zone = true);

}  // namespace pdl::tool
