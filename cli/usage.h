// usage.h — what every pdl program's command line shares, without the parser: the exit codes,
// the one error wording and the one --help layout. app.h builds on it with CLI11; pdl-fuse,
// whose options libfuse parses, uses it directly.
//
// Exit codes, the same in every program:
//   0 ok · 1 the run failed (pdl: fsck found a problem; pdl-fuse: the mount failed) ·
//   2 usage error (nothing was run, nothing created) · 3 image error and 4 image in use by
//   another process (the programs that open an image: pdl, pdl-fuse).
// A usage error is two lines on stderr:
//   PROGRAM: <what is wrong>
//   try 'PROGRAM --help'
// (for a command of the pdl tool "pdl: COMMAND: <what is wrong>", try 'pdl COMMAND --help').
// --help goes to stdout: usage lines, description, the options by group (left column the
// option and its value's name, right column what it does and its default), the exit status.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pdl::cli {

enum Exit : int { kExitOk = 0, kExitFailed = 1, kExitUsage = 2, kExitImage = 3, kExitBusy = 4 };

struct HelpItem {
  std::string left;  // "-o size=S", "--chip-size SIZE"
  std::string text;  // lines separated by '\n'; the default already appended
};

struct HelpGroup {
  std::string title;  // "options"
  std::vector<HelpItem> items;
};

struct HelpText {
  std::vector<std::string> usage;  // each without "usage: PROGRAM "
  std::string program;
  std::string description;         // paragraphs, lines separated by '\n'
  std::vector<HelpGroup> groups;
  std::string footer;              // after the groups: "exit status: ..."
};

// The --help text in the common layout.
std::string render_help(const HelpText& help);

// Print the usage error of `program` ("pdl-tpcc", or "pdl format" for a command) in the common
// wording; returns kExitUsage.
int usage_error(std::string_view program, std::string_view message);

}  // namespace pdl::cli
