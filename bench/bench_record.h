// bench_record.h — one result record of pdl-bench: ordered named fields, rendered as a JSON
// object (for --json) and as a CSV row (for --csv, one file per experiment).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pdl::bench {

class Record {
 public:
  struct Field {
    std::string key, json, csv;
  };
  Record& s(const std::string& key, const std::string& v);
  Record& n(const std::string& key, double v);
  Record& u(const std::string& key, uint64_t v);
  Record& b(const std::string& key, bool v);
  const std::vector<Field>& fields() const { return fields_; }
  // The value of `key` as written to CSV, or "" if absent.
  std::string get(const std::string& key) const;
  std::string json() const;

 private:
  Record& add(const std::string& key, std::string json, std::string csv);
  std::vector<Field> fields_;
};

// Writes `rendered` (already-rendered JSON values) as a JSON array, one per line.
bool write_json_array(const std::string& path, const std::vector<std::string>& rendered);
// Writes records as CSV: the header is the union of their keys in first-seen order; a record
// without a key leaves its cell empty. Strings are quoted when needed (RFC 4180).
bool write_csv(const std::string& path, const std::vector<Record>& records);

}  // namespace pdl::bench
