// cli.cc — error reporting, option parsing (CLI11, in the house layout of cli/app.h) and small
// formatting helpers of the pdl tool.
#include "tools/cli.h"

#include "cli/app.h"

#include <cstdarg>
#include <ctime>
#include <memory>

#include "flash/device/mtd_nand.h"

namespace pdl::tool {

int fail(const Command& cmd, int code, const std::string& msg) {
  std::fprintf(stderr, "pdl: %s: %s\n", cmd.name, msg.c_str());
  return code;
}

int usage_error(const Command& cmd, const std::string& msg) {
  return cli::usage_error(std::string("pdl ") + cmd.name, msg);
}

int fail_status(const Command& cmd, const Status& st) {
  std::string msg(st.message());
  if (msg.empty()) msg = errc_name(st.code());
  return fail(cmd, st.is(Errc::kBusy) ? kExitBusy : kExitImage, msg);
}

const char kExitStatus[] =
    "exit status: 0 ok, 1 problem found (fsck), 2 usage error, 3 image error (missing, not an\n"
    "image, corrupt, unreadable), 4 image in use by another process.";

namespace {

// The summary, then the details.
std::string description(const Command& cmd) {
  std::string d = cmd.summary;
  if (cmd.details && *cmd.details) {
    d += std::string("\n\n") + cmd.details;
    if (d.back() == '\n') d.pop_back();
  }
  return d;
}

// One command's command line on CLI11: its options as strings (flags as ""), --mtd, and the
// positional arguments, which the command checks by count.
struct CommandParser {
  cli::CommandLine cl;
  std::vector<std::string> values;  // one per cmd.options entry
  std::vector<cli::Option*> options;
  std::string mtd;
  std::vector<std::string> pos;

  explicit CommandParser(const Command& cmd)
      : cl({std::string("pdl ") + cmd.name, {cmd.args}, description(cmd), kExitStatus}),
        values(cmd.options.size()) {
    cli::App& app = cl.app();
    app.add_option("--mtd", mtd, "instead of IMAGE: raw NAND through Linux MTD (/dev/mtdN)")
        ->type_name("DEV")->check(cli::non_empty("device name"));
    for (size_t i = 0; i < cmd.options.size(); i++) {
      const Option& o = cmd.options[i];
      std::string names = std::string("--") + o.name;
      if (o.alias) names = std::string("-") + o.alias + "," + names;
      options.push_back(o.value ? app.add_option(names, values[i], o.help)->type_name(o.value)
                                : app.add_flag(names, o.help));
    }
    app.add_option("ARGS", pos)->group("");
  }
};

}  // namespace

int parse_args(const Command& cmd, int argc, char** argv, Args* out, bool* help) {
  *help = false;
  CommandParser line(cmd);
  const int rc = line.cl.parse(std::vector<std::string>(argv, argv + argc));
  if (rc == kExitOk) *help = true;  // printed
  if (rc >= 0) return rc == kExitOk ? kExitOk : kExitUsage;
  for (size_t i = 0; i < cmd.options.size(); i++)
    if (line.options[i]->count()) out->opt[cmd.options[i].name] = line.values[i];
  out->pos = line.pos;
  if (!line.mtd.empty()) {
    // Refused here unless it is one: a plain path would be taken for an image file.
    if (!MtdNand::is_mtd_path(line.mtd)) {
      std::unique_ptr<MtdNand> probe;
      const Status st = MtdNand::open(line.mtd, MtdOptions{.read_only = true}, &probe);
      return fail_status(cmd, st.is_ok() ? Status::error(Errc::kInvalidArgument,
                                                         line.mtd + " is not an MTD device")
                                         : st);
    }
    out->pos.insert(out->pos.begin(), line.mtd);
  }
  if (out->pos.size() < cmd.min_pos)
    return usage_error(cmd, std::string("missing argument; usage: pdl ") + cmd.name + " " +
                                cmd.args);
  if (out->pos.size() > cmd.max_pos)
    return usage_error(cmd, "unexpected argument '" + out->pos[cmd.max_pos] + "'");
  return kExitOk;
}

void print_help(const Command& cmd, FILE* out) {
  std::fputs(CommandParser(cmd).cl.help().c_str(), out);
}

bool parse_u64(const std::string& s, uint64_t* v) {
  if (s.empty()) return false;
  size_t i = 0;
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  }
  uint64_t r = 0;
  for (; i < s.size(); i++) {
    const char c = s[i];
    unsigned d;
    if (c >= '0' && c <= '9') d = unsigned(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') d = unsigned(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') d = unsigned(c - 'A' + 10);
    else return false;
    if (r > (UINT64_MAX - d) / base) return false;
    r = r * base + d;
  }
  *v = r;
  return true;
}

std::string strf(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  std::string s(n > 0 ? size_t(n) : 0, '\0');
  if (n > 0) std::vsnprintf(s.data(), s.size() + 1, fmt, ap2);
  va_end(ap2);
  return s;
}

std::string ppa_str(Ppa ppa, uint32_t pages_per_block) {
  return strf("ppa %u (block %u, page %u)", ppa, ppa / pages_per_block, ppa % pages_per_block);
}

std::string time_str(uint64_t seconds, bool zone) {
  const time_t t = time_t(seconds);
  struct tm tm;
  if (!localtime_r(&t, &tm)) return std::to_string(seconds);
  char buf[64];
  if (std::strftime(buf, sizeof buf, zone ? "%Y-%m-%d %H:%M:%S %z" : "%Y-%m-%d %H:%M:%S", &tm) == 0) return std::to_string(seconds);
  return buf;
}

}  // namespace pdl::tool
