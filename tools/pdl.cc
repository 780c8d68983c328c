// pdl.cc — main of the `pdl` tool: format, inspect and check pdl flash images.
//
//   pdl COMMAND [ARGS]      pdl --help | pdl COMMAND --help | pdl --version
//
// main finds the command, parses its arguments (cli.h) and runs it. Exit codes and the error
// format are cli.h's. No exception leaves main: anything thrown (bad_alloc, …) is reported as
// an image/I-O error (3). Output to stdout is flushed and checked before exiting, so a full
// disk or closed pipe is an error, not silent truncation.
#include <cerrno>
#include <cstring>
#include <exception>

#include "flash/common/c_edge.h"
#include "tools/commands.h"

#ifndef PDL_VERSION
#error "PDL_VERSION must be defined by the build (meson project version)"
#endif

namespace pdl::tool {
namespace {

const Command* const kCommands[] = {&kFormatCommand, &kInfoCommand, &kLsCommand,
                                    &kCatCommand,    &kFsckCommand, &kDumpCommand};

void print_main_help(FILE* out) {
  cli::HelpText h;
  h.program = "pdl";
  h.usage = {"COMMAND [ARGS]", "COMMAND --help | pdl --help | pdl --version"};
  h.description =
      "Format, inspect and check pdl images (an emulated NAND chip in a file, holding a\n"
      "page-differential-logging store and the files of a SQLite database).\n\n"
      "Every command but format opens the image read-only and never modifies it; an\n"
      "image in use by another process is refused, naming that process.";
  cli::HelpGroup commands{"commands", {}};
  for (const Command* c : kCommands) commands.items.push_back({c->name, c->summary});
  h.groups = {commands, {"options", {{"-h, --help", "this help"}, {"-V, --version", "the version"}}}};
  h.footer = kExitStatus;
  std::fputs(cli::render_help(h).c_str(), out);
}

int finish(const char* what, int code) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "pdl: %s: cannot write to standard output: %s\n", what,
                 std::strerror(errno));
    return code == kExitOk ? kExitImage : code;
  }
  return code;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    return cli::usage_error("pdl", "no command given; usage: pdl COMMAND [ARGS]");
  }
  const std::string word = argv[1];
  if (word == "--help" || word == "-h" || word == "help") {
    if (word == "help" && argc > 2) {  // pdl help COMMAND
      for (const Command* c : kCommands)
        if (argv[2] == std::string(c->name)) {
          print_help(*c, stdout);
          return finish(c->name, kExitOk);
        }
    }
    print_main_help(stdout);
    return finish("help", kExitOk);
  }
  if (word == "--version" || word == "-V") {
    std::printf("pdl %s\n", PDL_VERSION);
    return finish("version", kExitOk);
  }
  for (const Command* c : kCommands) {
    if (word != c->name) continue;
    Args args;
    bool help = false;
    const int rc = parse_args(*c, argc - 2, argv + 2, &args, &help);
    if (rc != kExitOk) return rc;
    if (help) return finish(c->name, kExitOk);  // printed
    return finish(c->name, c->run(*c, args));
  }
  return cli::usage_error("pdl", "unknown command '" + word + "'");
}

}  // namespace
}  // namespace pdl::tool

int main(int argc, char** argv) {
  return pdl::guarded_main("pdl", pdl::tool::run, argc, argv, pdl::tool::kExitImage);
}
