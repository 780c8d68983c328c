// json.h — a minimal JSON writer for reports (pdl-bench, PRAGMA pdl_stats, tools, pdl-fuse).
//
// Objects are built field by field; nested objects and arrays are added as already-rendered
// text. Numbers: unsigned integers exactly, doubles with 10 significant digits, non-finite
// doubles as null. Strings are escaped per RFC 8259 (control characters as \u00XX).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace pdl {

inline std::string json_str(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (uint8_t(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(uint8_t(c)));
      r += buf;
    } else {
      r += c;
    }
  }
  return r + "\"";
}

inline std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

class JsonObj {
 public:
  JsonObj& s(const char* k, const std::string& v) { return raw(k, json_str(v)); }
  JsonObj& n(const char* k, double v) { return raw(k, json_num(v)); }
  JsonObj& u(const char* k, uint64_t v) { return raw(k, std::to_string(v)); }
  JsonObj& b(const char* k, bool v) { return raw(k, v ? "true" : "false"); }
  JsonObj& o(const char* k, const JsonObj& v) { return raw(k, v.str()); }
  // An array of already-rendered values.
  JsonObj& a(const char* k, const std::vector<std::string>& items) {
    std::string r = "[";
    for (size_t i = 0; i < items.size(); i++) r += (i ? "," : "") + items[i];
    return raw(k, r + "]");
  }
  JsonObj& raw(const char* k, const std::string& v) {
    if (!body_.empty()) body_ += ",";
    body_ += json_str(k) + ":" + v;
    return *this;
  }
  std::string str() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

}  // namespace pdl
