// thread_annotations.h — Clang's thread-safety annotations (-Wthread-safety), and a mutex the
// analysis can check.
//
// Under Clang the PDL_* macros expand to the capability attributes, so a build with
// `-Wthread-safety` proves that what a lock guards is touched only with the lock held and that
// locks are taken in their stated order; under GCC they expand to nothing. std::mutex is no
// annotated capability in libstdc++, so a lock the analysis is to check is a pdl::Mutex, held
// through a pdl::MutexLock (a std::lock_guard the analysis understands).
// Thread-safety: Mutex is a std::mutex.
#pragma once

#include <mutex>

#if defined(__clang__)
#define PDL_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define PDL_THREAD_ANNOTATION(x)
#endif

#define PDL_CAPABILITY(x) PDL_THREAD_ANNOTATION(capability(x))
#define PDL_SCOPED_CAPABILITY PDL_THREAD_ANNOTATION(scoped_lockable)
#define PDL_GUARDED_BY(x) PDL_THREAD_ANNOTATION(guarded_by(x))
#define PDL_PT_GUARDED_BY(x) PDL_THREAD_ANNOTATION(pt_guarded_by(x))
#define PDL_ACQUIRED_BEFORE(...) PDL_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define PDL_ACQUIRED_AFTER(...) PDL_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define PDL_REQUIRES(...) PDL_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define PDL_ACQUIRE(...) PDL_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define PDL_RELEASE(...) PDL_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define PDL_EXCLUDES(...) PDL_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

namespace pdl {

class PDL_CAPABILITY("mutex") Mutex {
 public:
  void lock() PDL_ACQUIRE() { mu_.lock(); }
  void unlock() PDL_RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` for its scope.
class PDL_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) PDL_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() PDL_RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

}  // namespace pdl
