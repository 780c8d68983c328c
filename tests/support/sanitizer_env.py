# sanitizer_env.py — the environment for an uninstrumented host (the stock sqlite3) that loads
# the instrumented pdl.so of a sanitizer build: meson passes the sanitizer runtimes in
# PDL_SANITIZER_PRELOAD; they are preloaded into that host only, with leak detection off (the
# host is not ours). In a plain build the environment is returned unchanged.
import os


def sqlite_env():
    env = dict(os.environ)
    preload = os.environ.get("PDL_SANITIZER_PRELOAD", "").split()
    if preload:
        env["LD_PRELOAD"] = " ".join(preload + env.get("LD_PRELOAD", "").split())
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    return env
