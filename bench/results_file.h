// results_file.h — a benchmark's results files, written at the end of a run: the tables it
// printed to stdout, again into --txt FILE, and its JSON into --json FILE (pdl-ftlbench,
// pdl-nvmbench).
//
// Invariants: the text file holds exactly what the print function writes to stdout; the JSON is
// made only when a JSON file is asked for; a file that cannot be written is said on stderr as
// "<tool>: cannot write <path>" and makes the result 1, the other file is still written.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace pdl::bench {

// Writes `text` to `path` (created or truncated); false if any step fails.
inline bool write_file(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fputs(text.c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

// What `print(FILE*)` writes, as a string (empty if no memory stream can be opened).
template <class Print>
std::string printed_text(Print&& print) {
  std::string text;
  char* buf = nullptr;
  size_t len = 0;
  if (FILE* m = open_memstream(&buf, &len)) {
    print(m);
    std::fclose(m);
    text.assign(buf, len);
    std::free(buf);
  }
  return text;
}

// Writes the tables `print(FILE*)` gives into `txt` and `json_text()` into `json` (each only
// if its path is not empty). Returns 0, or 1 when a file could not be written.
template <class Print, class Json>
int write_results(const char* tool, const std::string& txt, Print&& print,
                  const std::string& json, Json&& json_text) {
  int status = 0;
  if (!txt.empty() && !write_file(txt, printed_text(print))) {
    std::fprintf(stderr, "%s: cannot write %s\n", tool, txt.c_str());
    status = 1;
  }
  if (!json.empty() && !write_file(json, json_text())) {
    std::fprintf(stderr, "%s: cannot write %s\n", tool, json.c_str());
    status = 1;
  }
  return status;
}

}  // namespace pdl::bench
