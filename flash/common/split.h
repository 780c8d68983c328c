// split.h — "a,b,,c" → {"a", "b", "c"}: the comma-separated lists of the command lines
// (--methods, --journal-mode, ...). Empty items are dropped.
#pragma once

#include <string>
#include <vector>

namespace pdl {

inline std::vector<std::string> split_list(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    size_t b = s.find(sep, a);
    if (b == std::string::npos) b = s.size();
    if (b > a) out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

}  // namespace pdl
