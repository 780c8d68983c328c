# pdl_cli.py — running the `pdl` tool and the stock sqlite3 shell (loading pdl.so) from the
# Python test scripts (tests/tools/test_pdl_tool.py, test_pdl_nvm.py).
#
# A sanitizer report or a crash (death by a signal) of the tool is a failure whatever its exit
# code: run_pdl records it in checks.failures (and prints it), so the script's finish() fails.
import subprocess

from checks import failures
from sanitizer_env import sqlite_env


def run_pdl(tool, args, stdout=subprocess.PIPE):
    """(exit code, stdout bytes — b"" when not piped, stderr text) of `tool args...`."""
    r = subprocess.run([tool, *args], stdout=stdout, stderr=subprocess.PIPE, timeout=120)
    err = r.stderr.decode(errors="replace")
    if "Sanitizer" in err or "runtime error" in err or r.returncode < 0:
        failures.append("crash/sanitizer report in pdl %s: %s" % (" ".join(args), err))
        print(err)
    return r.returncode, r.stdout if r.stdout is not None else b"", err


def run_sqlite(sqlite, module, image, script, uri_extra=""):
    """The finished sqlite3 shell `sqlite` (stdout and stderr bytes) that ran `script` on
    file:IMAGE?vfs=pdl + uri_extra through the extension `module`."""
    cmd = [sqlite, "-batch", "-bail", "-cmd", ".load " + module,
           "-cmd", ".open file:%s?vfs=pdl%s" % (image, uri_extra)]
    return subprocess.run(cmd, input=script.encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=sqlite_env(), timeout=300)
