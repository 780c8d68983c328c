// host_file.h — system calls on the host file holding an emulated chip (an image file), in the
// project's status vocabulary: one wording for both the image's header work
// (emulated_nand.cc) and its page array (file_media.cc).
//
// A host file system without room (ENOSPC, EDQUOT) is Errc::kHostFull, saying that nothing was
// written; any other failure is kIoError naming the operation, the file and errno's text.
// EINTR is retried.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "flash/common/status.h"

namespace pdl::detail {

// kIoError "<what> <path>: <strerror(errno)>".
Status errno_status(const char* what, const std::string& path);
// errno `e` says the host file system refused room.
bool host_full_errno(int e);
// kHostFull for `path`; `why` says what refused (strerror, or an injected fault).
Status host_full(const std::string& path, const std::string& why);
// All n bytes at off, or an error (a short write is one).
Status pwrite_all(int fd, const std::string& path, const uint8_t* p, size_t n, uint64_t off);
// All n bytes at off; bytes past the end of the file read as zeros (erased flash, stored
// inverted).
Status pread_all(int fd, const std::string& path, uint8_t* p, size_t n, uint64_t off);

}  // namespace pdl::detail
