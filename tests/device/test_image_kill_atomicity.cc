// test_image_kill_atomicity.cc — a host process killed (SIGKILL) while it programs and erases
// an image file leaves the image exactly as its last completed flash operation left it, or as
// the one in flight would have: never half of one. Checked through a writable open (which
// redoes a pending operation) and a read-only one (which overlays it without writing), with
// the image read through the shared mapping and through pread/pwrite (PDL_IMAGE_IO=pread).
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <random>

#include <catch2/catch.hpp>

#include "flash/device/emulated_nand.h"
#include "tests/support/nand_op_sequence.h"
#include "tests/support/require_status.h"
#include "tests/support/test_util.h"

using pdl::EmulatedNand;
using pdl::test::media_difference;
using pdl::test::NandOp;

namespace {

constexpr size_t kOps = 2000;

// The state of a fresh chip after the first n operations of `ops`.
std::unique_ptr<EmulatedNand> replay(const pdl::Geometry& g, const std::vector<NandOp>& ops,
                                     size_t n) {
  auto ram = pdl::test::make_ram_nand(g);
  for (size_t i = 0; i < n && i < ops.size(); i++) REQUIRE_OK(ops[i].apply(*ram));
  return ram;
}

// The open image equals the replay after `done` operations or after the one in flight too.
void check_whole_operations(EmulatedNand& image, const pdl::Geometry& g,
                            const std::vector<NandOp>& ops, size_t done, const char* how) {
  INFO(how << ": " << done << " operations completed");
  auto before = replay(g, ops, done);
  const std::string d0 = media_difference(image, *before);
  if (d0.empty()) return;
  auto after = replay(g, ops, done + 1);
  const std::string d1 = media_difference(image, *after);
  INFO("vs " << done << " operations: " << d0 << "; vs " << done + 1 << ": " << d1);
  CHECK(d1.empty());
}

}  // namespace

TEST_CASE("a process killed mid-operation leaves the image as a whole number of operations",
          "[nand][image][crash]") {
  // Pages and blocks not aligned to host pages; pages big enough that a kill often lands in a copy.
  const pdl::Geometry g = pdl::test::geometry(4096, 136, 16, 8).resolved();
  auto rng = pdl::test::seeded_rng(0x5161);
  // Published by the child: operations completed (shared memory made before fork).
  auto* done = static_cast<std::atomic<uint64_t>*>(mmap(nullptr, sizeof(std::atomic<uint64_t>),
                                                        PROT_READ | PROT_WRITE,
                                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  REQUIRE(done != MAP_FAILED);
  const int trials = 120;  // PDL_MATRIX_STRIDE=s runs every s-th
  int killed_mid_run = 0;
  for (int t = 0; t < trials; t++) {
    if (!pdl::test::in_matrix_sample(size_t(t), __LINE__)) continue;
    const bool pread_io = t % 4 == 3;
    if (pread_io) setenv("PDL_IMAGE_IO", "pread", 1);
    const uint64_t seed = rng();
    const std::vector<NandOp> ops = pdl::test::nand_op_sequence(g, seed, kOps);
    const std::string path = pdl::test::temp_path("kill.img");
    {
      std::unique_ptr<EmulatedNand> fresh;
      REQUIRE_OK(EmulatedNand::create_file(path, g, &fresh));
    }
    done->store(0);
    const uint64_t target = rng() % kOps;
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      std::unique_ptr<EmulatedNand> n;
      if (!EmulatedNand::open_file(path, &n).is_ok()) _exit(2);
      for (size_t i = 0; i < ops.size(); i++) {
        if (!ops[i].apply(*n).is_ok()) _exit(3);
        done->store(i + 1, std::memory_order_release);
      }
      _exit(0);
    }
    // Kill it once it has completed `target` operations (it is then most likely in one).
    int wstatus = 0;
    bool reaped = false;  // (it may finish between a look at `done` and this one)
    while (!reaped && done->load(std::memory_order_acquire) < target)
      reaped = waitpid(child, &wstatus, WNOHANG) == child;
    if (!reaped) {
      kill(child, SIGKILL);
      REQUIRE(waitpid(child, &wstatus, 0) == child);
    }
    REQUIRE((WIFSIGNALED(wstatus) || WEXITSTATUS(wstatus) == 0));
    const size_t n = done->load();
    if (WIFSIGNALED(wstatus) && n < kOps) killed_mid_run++;
    INFO("trial " << t << ", seed " << seed << (pread_io ? ", pread/pwrite" : ", mapped"));
    {
      std::unique_ptr<EmulatedNand> ro;
      REQUIRE_OK(EmulatedNand::open_file(path, &ro, /*read_only=*/true));
      check_whole_operations(*ro, g, ops, n, "read-only open");
    }
    {
      std::unique_ptr<EmulatedNand> rw;
      REQUIRE_OK(EmulatedNand::open_file(path, &rw));
      check_whole_operations(*rw, g, ops, n, "writable open");
    }
    {
      std::unique_ptr<EmulatedNand> ro;
      REQUIRE_OK(EmulatedNand::open_file(path, &ro, /*read_only=*/true));
      check_whole_operations(*ro, g, ops, n, "read-only open after the writable one");
    }
    unsetenv("PDL_IMAGE_IO");
  }
  munmap(done, sizeof(std::atomic<uint64_t>));
  CHECK(killed_mid_run > 0);
}
