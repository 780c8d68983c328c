// mount_probe.h — one mount of an image file measured in a process of its own (pdl-bench's
// hidden mode `--mount-probe IMG EXPECT OUT`), so that its peak RSS is the mount's alone, and
// the parent's side that runs it (fork + exec of pdl-bench itself).
//
// The probe (run with PDL_IMAGE_IO=pread and PDL_IMAGE_READ_CACHE=0: the image is neither mapped
// nor cached, so its RSS holds none of the chip's pages, as a real chip's reads take none) opens
// IMG, runs mount_store and set_commit_mode(kGroup) as an image's open does, then reads VmHWM /
// VmRSS / RssAnon / RssFile from /proc/self/status, the store's table_bytes and the chip's counters
// (pages read, simulated time), then — only then, so that none of it is counted in the mount's RSS
// — loads EXPECT (mount_expect.h) and reads every logical page back against it. It writes OUT as
// "key value" lines; "error MESSAGE" when the mount or the check failed (exit status 1).
#pragma once

#include <map>
#include <string>

#include "flash/common/status.h"

namespace pdl::bench {

// The probe's main: argv = {IMG, EXPECT, OUT[, SAMPLE]} (verify_mount's sample; 0: every page). Exit status 0 ok, 1 failed (OUT says why), 2 usage.
int mount_probe_main(int argc, char** argv);

// What a probe measured ("key" -> "value" as written in OUT).
using ProbeResult = std::map<std::string, std::string>;

// Runs the probe on `image` in a fresh pdl-bench process (/proc/self/exe) and reads its OUT
// (`scratch`, removed after). Fails with the probe's own error message if it reported one
// (a mount that loses data is an error, not a figure), or with how the child ended.
Status run_mount_probe(const std::string& image, const std::string& expect,
                       const std::string& scratch, uint64_t sample, ProbeResult* out);

}  // namespace pdl::bench
