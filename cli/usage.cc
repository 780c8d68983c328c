// usage.cc — the common --help layout and usage-error wording (usage.h).
#include "cli/usage.h"

#include <cstdio>

namespace pdl::cli {
namespace {

constexpr size_t kColumn = 22;  // where the right column of the option list starts

void append_indented(std::string* out, const std::string& text, size_t indent) {
  size_t a = 0;
  while (a <= text.size()) {
    size_t b = text.find('\n', a);
    if (b == std::string::npos) b = text.size();
    if (a > 0) *out += std::string(indent, ' ');
    *out += text.substr(a, b - a);
    *out += '\n';
    a = b + 1;
  }
}

}  // namespace

std::string render_help(const HelpText& h) {
  std::string s;
  for (size_t i = 0; i < h.usage.size(); i++)
    s += (i == 0 ? "usage: " : "       ") + h.program + (h.usage[i].empty() ? "" : " ") +
         h.usage[i] + "\n";
  if (!h.description.empty()) {
    s += "\n";
    append_indented(&s, h.description, 0);
  }
  for (const HelpGroup& g : h.groups) {
    if (g.items.empty()) continue;
    s += "\n" + g.title + ":\n";
    for (const HelpItem& it : g.items) {
      std::string left = "  " + it.left;
      // A long option name gets a line of its own; its text starts below, in the column.
      left += left.size() + 1 <= kColumn ? std::string(kColumn - left.size(), ' ')
                                         : "\n" + std::string(kColumn, ' ');
      s += left;
      append_indented(&s, it.text, kColumn);
    }
  }
  if (!h.footer.empty()) {
    s += "\n";
    append_indented(&s, h.footer, 0);
  }
  return s;
}

int usage_error(std::string_view program, std::string_view message) {
  // "pdl format" reports as "pdl: format: ...", like the command's other errors.
  std::string prefix(program);
  if (const size_t sp = prefix.find(' '); sp != std::string::npos) prefix.replace(sp, 1, ": ");
  std::fprintf(stderr, "%s: %.*s\ntry '%.*s --help'\n", prefix.c_str(), int(message.size()),
               message.data(), int(program.size()), program.data());
  return kExitUsage;
}

}  // namespace pdl::cli
