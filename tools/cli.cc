// cli.cc — error reporting, option parsing and small formatting helpers of the pdl tool.
#include "tools/cli.h"

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
  return fail(cmd, kExitUsage, msg + " (see 'pdl " + cmd.name + " --help')");
}

int fail_status(const Command& cmd, const Status& st) {
  std::string msg(st.message());
  if (msg.empty()) msg = errc_name(st.code());
  return fail(cmd, st.is(Errc::kBusy) ? kExitBusy : kExitImage, msg);
}

namespace {
const Option* find_long(const Command& cmd, const std::string& name) {
  for (const Option& o : cmd.options)
    if (name == o.name) return &o;
  return nullptr;
}
const Option* find_short(const Command& cmd, char c) {
  for (const Option& o : cmd.options)
    if (o.alias && o.alias == c) return &o;
  return nullptr;
}
}  // namespace

int parse_args(const Command& cmd, int argc, char** argv, Args* out, bool* help) {
  *help = false;
  bool options_done = false;
  std::string mtd;
  for (int i = 0; i < argc; i++) {
    const std::string a = argv[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      out->pos.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      *help = true;
      continue;
    }
    const Option* o = nullptr;
    std::string value;
    bool inline_value = false;
    if (a[1] == '-') {
      std::string name = a.substr(2);
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
        inline_value = true;
      }
      if (name == "mtd") {  // every command's IMAGE, given as an MTD device
        if (!inline_value) {
          if (i + 1 >= argc) return usage_error(cmd, "--mtd needs a value (DEV)");
          value = argv[++i];
        }
        if (!mtd.empty()) return usage_error(cmd, "--mtd given twice");
        if (value.empty()) return usage_error(cmd, "--mtd needs a value (DEV)");
        mtd = value;
        continue;
      }
      o = find_long(cmd, name);
      if (!o) return usage_error(cmd, "unknown option --" + name);
    } else {
      if (a.size() != 2) return usage_error(cmd, "unknown option " + a);
      o = find_short(cmd, a[1]);
      if (!o) return usage_error(cmd, "unknown option " + a);
    }
    const std::string shown = std::string("--") + o->name;
    if (o->value && !inline_value) {
      if (i + 1 >= argc) return usage_error(cmd, shown + " needs a value (" + o->value + ")");
      value = argv[++i];
    } else if (!o->value && inline_value) {
      return usage_error(cmd, shown + " takes no value");
    }
    if (out->opt.count(o->name)) return usage_error(cmd, shown + " given twice");
    out->opt[o->name] = value;
  }
  if (*help) return kExitOk;
  if (!mtd.empty()) {
    // Refused here unless it is one: a plain path would be taken for an image file.
    if (!MtdNand::is_mtd_path(mtd)) {
      std::unique_ptr<MtdNand> probe;
      const Status st = MtdNand::open(mtd, MtdOptions{.read_only = true}, &probe);
      return fail_status(cmd, st.is_ok() ? Status::error(Errc::kInvalidArgument,
                                                         mtd + " is not an MTD device")
                                         : st);
    }
    out->pos.insert(out->pos.begin(), mtd);
  }
  if (out->pos.size() < cmd.min_pos)
    return usage_error(cmd, std::string("missing argument; usage: pdl ") + cmd.name + " " +
                                cmd.args);
  if (out->pos.size() > cmd.max_pos)
    return usage_error(cmd, "unexpected argument '" + out->pos[cmd.max_pos] + "'");
  return kExitOk;
}

void print_help(const Command& cmd, FILE* out) {
  std::fprintf(out, "usage: pdl %s %s\n\n%s\n", cmd.name, cmd.args, cmd.summary);
  if (cmd.details && *cmd.details) std::fprintf(out, "\n%s", cmd.details);
  std::fprintf(out, "\noptions:\n");
  std::fprintf(out, "%-26s %s\n", "  --mtd DEV",
               "instead of IMAGE: raw NAND through Linux MTD (/dev/mtdN)");
  for (const Option& o : cmd.options) {
    std::string left = "  ";
    if (o.alias) left += std::string("-") + o.alias + ", ";
    left += std::string("--") + o.name;
    if (o.value) left += std::string(" ") + o.value;
    std::fprintf(out, "%-26s %s\n", left.c_str(), o.help);
  }
  std::fprintf(out, "%-26s %s\n", "  -h, --help", "this help");
  std::fprintf(out,
               "\nexit status: 0 ok, 1 problem found (fsck), 2 usage error, 3 image error "
               "(missing, not an\nimage, corrupt, unreadable), 4 image in use by another "
               "process.\n");
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
