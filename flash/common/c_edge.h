// c_edge.h — the catch-all at a C edge: no C++ exception unwinds into C code (SQLite, libfuse).
//
// Each edge (vfs/, fuse/) wraps every callback it hands to C in guarded<Name, Fn>: a function of
// Fn's exact signature that calls Fn and, should an exception escape it, hands the edge's
// Escape policy the callback's name and what escaped; the policy reports it (without needing
// memory: std::bad_alloc is the likely case) and says what the C caller gets back. Inside, the
// layers return Status; an exception reaching an edge is out of memory (std::bad_alloc) or a
// defect, and either way the host program must get an error code, never an abort.
//
// USAGE
//   struct VfsEscape {  // the edge's policy
//     static int escaped(const char* name, const char* what, bool no_memory) noexcept;
//   };
//   try { ... } catch (...) { return pdl::escape_current<VfsEscape>("xOpen"); }  // by hand
//   /* xRead */ pdl::guarded<VfsEscape, "xRead", x_read>,
// Callbacks returning void get the report only; those returning a pointer also get nullptr.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <new>
#include <type_traits>

namespace pdl {

// A string literal as a template argument: the callback's name in reports.
template <size_t N>
struct EdgeName {
  char s[N];
  constexpr EdgeName(const char (&v)[N]) { std::copy_n(v, N, s); }  // NOLINT: implicit
};

// Inside a catch block: hand the exception being handled to Policy::escaped.
template <typename Policy>
auto escape_current(const char* name) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc& e) {
    return Policy::escaped(name, e.what(), true);
  } catch (const std::exception& e) {
    return Policy::escaped(name, e.what(), false);
  } catch (...) {
    return Policy::escaped(name, "an unknown exception", false);
  }
}

template <typename Policy, EdgeName Name, auto Fn, typename Sig = decltype(Fn)>
struct EdgeGuard;

template <typename Policy, EdgeName Name, auto Fn, typename R, typename... A>
struct EdgeGuard<Policy, Name, Fn, R (*)(A...)> {
  static R call(A... a) noexcept {
    try {
      return Fn(a...);
    } catch (...) {
      if constexpr (std::is_void_v<R>) {
        escape_current<Policy>(Name.s);
      } else if constexpr (std::is_pointer_v<R>) {
        escape_current<Policy>(Name.s);
        return nullptr;
      } else {
        return R(escape_current<Policy>(Name.s));
      }
    }
  }
};

template <typename Policy, EdgeName Name, auto Fn>
inline constexpr auto guarded = &EdgeGuard<Policy, Name, Fn>::call;

// A program's main behind a catch-all: an exception escaping `run` is reported on stderr as
// "<prog>: out of memory (...)" or "<prog>: internal error (...)", and the program exits with
// `failure` instead of aborting.
inline int guarded_main(const char* prog, int (*run)(int, char**), int argc, char** argv,
                        int failure) noexcept {
  struct Print {
    const char* prog;
    int escaped(const char* what, bool no_memory) const noexcept {
      std::fprintf(stderr, "%s: %s (%s)\n", prog, no_memory ? "out of memory" : "internal error",
                   what);
      return 0;
    }
  };
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc& e) {
    Print{prog}.escaped(e.what(), true);
  } catch (const std::exception& e) {
    Print{prog}.escaped(e.what(), false);
  } catch (...) {
    Print{prog}.escaped("an unknown exception", false);
  }
  return failure;
}

}  // namespace pdl
