// mount_probe.cc — a mount measured in a fresh process (mount_probe.h).
#include "bench/mount_probe.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "bench/mount_expect.h"
#include "bench/wall_clock.h"
#include "flash/device/emulated_nand.h"
#include "flash/image/open_store.h"

extern char** environ;

namespace pdl::bench {
namespace {

// "VmHWM:	   12345 kB" lines of /proc/self/status, in bytes; 0 if absent.
std::map<std::string, uint64_t> proc_status() {
  std::map<std::string, uint64_t> m;
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    if (key != "VmHWM" && key != "VmRSS" && key != "RssAnon" && key != "RssFile") continue;
    m[key] = std::strtoull(line.c_str() + colon + 1, nullptr, 10) * 1024;
  }
  return m;
}

Status probe(const std::string& image, const std::string& expect_path, uint64_t sample,
             std::ostream& out) {
  const auto before = proc_status();
  std::unique_ptr<EmulatedNand> nand;
  PDL_TRY(EmulatedNand::open_file(image, &nand));
  const NandCounters c0 = nand->counters();
  std::unique_ptr<PageStore> store;
  MountReport rep;
  const auto t0 = Clock::now();
  // As an image's open does (image.cc): mount, then the atomic groups the fill ran (where the
  // method has them: exp_mount.cc).
  PDL_TRY(mount_store(*nand, &store, &rep));
  if (has_atomic_commit(store->params().method))
    PDL_TRY(store->set_commit_mode(CommitMode::kGroup));
  const double wall = seconds_since(t0);
  const NandCounters d = nand->counters() - c0;
  const auto after = proc_status();
  out << "rss_before_bytes " << before.at("VmRSS") << "\n"
      << "vmhwm_bytes " << after.at("VmHWM") << "\n"
      << "vmrss_bytes " << after.at("VmRSS") << "\n"
      << "rss_anon_bytes " << after.at("RssAnon") << "\n"
      << "rss_file_bytes " << after.at("RssFile") << "\n"
      << "wall_s " << wall << "\n"
      << "sim_us " << rep.sim_us << "\n"
      << "chip_sim_us " << d.sim_us << "\n"
      << "pages_read " << d.page_reads + d.spare_reads << "\n"
      << "page_reads " << d.page_reads << "\n"
      << "spare_reads " << d.spare_reads << "\n"
      << "programs " << d.programs << "\n"
      << "erases " << d.erases << "\n"
      << "pages_scanned " << rep.pages_scanned << "\n"
      << "from_checkpoint " << (rep.from_checkpoint ? 1 : 0) << "\n"
      << "checkpoint_pages " << rep.checkpoint_pages << "\n"
      << "scan_reason " << (rep.scan_reason.empty() ? "-" : rep.scan_reason) << "\n"
      << "torn_pages " << rep.torn_pages << "\n"
      << "live_lpns " << rep.live_lpns << "\n"
      << "table_bytes " << store->table_bytes() << "\n"
      << "logical_pages " << store->logical_pages() << "\n";
  MountExpect expect;
  PDL_TRY(expect.load(expect_path));
  uint64_t pages = 0;
  const auto t1 = Clock::now();
  PDL_TRY(verify_mount(*store, expect, sample, 0x5eed, &pages));
  out << "verified_pages " << pages << "\n"
      << "verify_sample " << sample << "\n"
      << "verify_wall_s " << seconds_since(t1) << "\n";
  return Status::ok();
}

}  // namespace

int mount_probe_main(int argc, char** argv) {
  uint64_t sample = 0;
  if (argc == 4) {
    char* end = nullptr;
    sample = std::strtoull(argv[3], &end, 10);
    if (end == argv[3] || *end != '\0') argc = 0;  // not a count: the usage below
  }
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr,
                 "pdl-bench: usage: pdl-bench --mount-probe IMAGE EXPECT OUT [SAMPLE]\n");
    return 2;
  }
  std::ostringstream out;
  const Status st = probe(argv[0], argv[1], sample, out);
  if (!st.is_ok()) out << "error " << st.to_string() << "\n";
  std::ofstream f(argv[2]);
  f << out.str();
  f.close();
  if (!f) {
    std::fprintf(stderr, "pdl-bench: cannot write %s\n", argv[2]);
    return 1;
  }
  return st.is_ok() ? 0 : 1;
}

Status run_mount_probe(const std::string& image, const std::string& expect,
                       const std::string& scratch, uint64_t sample, ProbeResult* out) {
  std::vector<std::string> args = {"pdl-bench", "--mount-probe", image, expect, scratch,
                                   std::to_string(sample)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  // The child reads the image with pread (file_media.h): a mapped image would count the chip's
  // pages the mount touched in its RSS, which a real chip's reads do not take.
  // Nor its pread cache of raw pages (PDL_IMAGE_READ_CACHE=0): an emulator's stand-in for the
  // host's page cache, 2 MiB of chip pages that no mount on a real chip holds.
  std::vector<std::string> env_s = {"PDL_IMAGE_IO=pread", "PDL_IMAGE_READ_CACHE=0"};
  for (char** e = environ; *e; e++)
    if (std::strncmp(*e, "PDL_IMAGE_IO=", 13) != 0 &&
        std::strncmp(*e, "PDL_IMAGE_READ_CACHE=", 21) != 0)
      env_s.push_back(*e);
  std::vector<char*> env;
  for (std::string& e : env_s) env.push_back(e.data());
  env.push_back(nullptr);
  pid_t pid = 0;
  if (const int e = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), env.data()))
    return Status::error(Errc::kIoError, std::string("cannot start the mount probe: ") +
                                             std::strerror(e));
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR)
      return Status::error(Errc::kIoError, std::string("waitpid: ") + std::strerror(errno));
  out->clear();
  std::ifstream f(scratch);
  std::string line;
  while (std::getline(f, line)) {
    const size_t sp = line.find(' ');
    if (sp != std::string::npos) (*out)[line.substr(0, sp)] = line.substr(sp + 1);
  }
  f.close();
  std::remove(scratch.c_str());
  if (auto it = out->find("error"); it != out->end())
    return Status::error(Errc::kCorrupt, "mount probe of " + image + ": " + it->second);
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || !out->count("verified_pages"))
    return Status::error(Errc::kIoError,
                         "mount probe of " + image + " ended " +
                             (WIFSIGNALED(ws) ? "by signal " + std::to_string(WTERMSIG(ws))
                                              : "with status " + std::to_string(WEXITSTATUS(ws))) +
                             " without a result");
  return Status::ok();
}

}  // namespace pdl::bench
