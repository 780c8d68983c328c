// bench_record.cc — Record rendering to JSON and CSV.
#include "bench/bench_record.h"

#include <algorithm>
#include <cstdio>

#include "flash/common/json.h"

namespace pdl::bench {

Record& Record::add(const std::string& key, std::string json, std::string csv) {
  for (Field& f : fields_)
    if (f.key == key) {
      f.json = std::move(json);
      f.csv = std::move(csv);
      return *this;
    }
  fields_.push_back({key, std::move(json), std::move(csv)});
  return *this;
}

Record& Record::s(const std::string& key, const std::string& v) {
  std::string csv = v;
  if (v.find_first_of(",\"\n\r") != std::string::npos) {
    csv = "\"";
    for (char c : v) {
      if (c == '"') csv += '"';
      csv += c;
    }
    csv += "\"";
  }
  return add(key, json_str(v), std::move(csv));
}

Record& Record::n(const std::string& key, double v) {
  const std::string j = json_num(v);
  return add(key, j, j == "null" ? "" : j);
}

Record& Record::u(const std::string& key, uint64_t v) {
  const std::string t = std::to_string(v);
  return add(key, t, t);
}

Record& Record::b(const std::string& key, bool v) {
  return add(key, v ? "true" : "false", v ? "true" : "false");
}

std::string Record::get(const std::string& key) const {
  for (const Field& f : fields_)
    if (f.key == key) return f.csv;
  return "";
}

std::string Record::json() const {
  std::string r = "{";
  for (size_t i = 0; i < fields_.size(); i++)
    r += (i ? "," : "") + json_str(fields_[i].key) + ":" + fields_[i].json;
  return r + "}";
}

bool write_json_array(const std::string& path, const std::vector<std::string>& rendered) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::string out = "[\n";
  for (size_t i = 0; i < rendered.size(); i++)
    out += "  " + rendered[i] + (i + 1 < rendered.size() ? ",\n" : "\n");
  out += "]\n";
  const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  return std::fclose(f) == 0 && ok;
}

bool write_csv(const std::string& path, const std::vector<Record>& records) {
  std::vector<std::string> cols;
  for (const Record& r : records)
    for (const Record::Field& f : r.fields())
      if (std::find(cols.begin(), cols.end(), f.key) == cols.end()) cols.push_back(f.key);
  std::string out;
  for (size_t i = 0; i < cols.size(); i++) out += (i ? "," : "") + cols[i];
  out += "\n";
  for (const Record& r : records) {
    for (size_t i = 0; i < cols.size(); i++) out += (i ? "," : "") + r.get(cols[i]);
    out += "\n";
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace pdl::bench
