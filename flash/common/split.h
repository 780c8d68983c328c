// split.h — "a,b,,c" → {"a", "b", "c"}: the comma-separated lists of the command lines
// (--methods, --journal-mode, ...). Empty items are dropped. pick_keys() turns such a list
// into entries of a table by their `key` field.
#pragma once

#include <algorithm>
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

// The entries of `all` (structs with a std::string `key`) that `list` names, in list order,
// duplicates dropped. false with *err = "unknown method 'x' (known: <known>)" for an unknown
// key, or "no <what> given" for an empty list.
template <typename T>
bool pick_keys(const std::string& list, const std::vector<T>& all, const char* what,
               const std::string& known, std::vector<T>* out, std::string* err) {
  std::vector<T> v;
  for (const std::string& key : split_list(list)) {
    auto it = std::find_if(all.begin(), all.end(), [&](const T& m) { return m.key == key; });
    if (it == all.end()) {
      *err = std::string("unknown ") + what + " '" + key + "' (known: " + known + ")";
      return false;
    }
    if (std::none_of(v.begin(), v.end(), [&](const T& m) { return m.key == key; }))
      v.push_back(*it);
  }
  if (v.empty()) {
    *err = std::string("no ") + what + " given";
    return false;
  }
  *out = std::move(v);
  return true;
}

}  // namespace pdl
