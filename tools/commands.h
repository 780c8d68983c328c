// commands.h — the commands of the `pdl` tool, one per cmd_*.cc, in `pdl --help` order.
#pragma once

#include "tools/cli.h"

namespace pdl::tool {

extern const Command kFormatCommand;  // cmd_format.cc
extern const Command kInfoCommand;    // cmd_info.cc
extern const Command kLsCommand;      // cmd_ls.cc
extern const Command kCatCommand;     // cmd_cat.cc
extern const Command kFsckCommand;    // cmd_fsck.cc
extern const Command kDumpCommand;    // cmd_dump.cc

}  // namespace pdl::tool
