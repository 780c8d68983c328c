# bench_run.py — running the benchmark programs from the smoke tests (tests/bench/ftl_smoke.py,
# nvm_smoke.py): a program that fails raises RuntimeError with the tail of its output; a JSON
# result is read back; pdl-tpcc's tiny run and its members' consistency checks.
import json
import os
import subprocess


def run(cmd):
    """stdout of `cmd`; RuntimeError with its last 12 lines of output if it exits non-zero."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n" +
                           "\n".join((p.stdout + p.stderr).splitlines()[-12:]))
    return p.stdout


def run_json(cmd, out):
    """Runs `cmd` (which writes JSON to the file `out`) and returns that JSON."""
    run(cmd)
    with open(out) as f:
        return json.load(f)


def tpcc_members(tpcc, tmp, methods, commit, want, errors):
    """pdl-tpcc at scale 0.01 (60 transactions after 60 of warm-up, DELETE journal, no unix
    VFS) with --methods `methods` and --commit `commit`, in `tmp`. Each key of `want` that is
    not a member, or whose consistency check failed, is said in `errors`. Returns the members
    by key (all of the run's) and the JSON's path."""
    out = os.path.join(tmp, "tpcc.json")
    data = run_json([tpcc, "--scale", "0.01", "--transactions", "60", "--warmup", "60",
                     "--journal-mode", "delete", "--methods", methods, "--commit", commit,
                     "--no-unix", "--quiet", "--work-dir", tmp, "--json", out], out)
    members = {m["key"]: m for m in data["runs"][0]["methods"]}
    for key in want:
        m = members.get(key)
        if not m:
            errors.append(f"tpcc: no member {key} (have {', '.join(members)})")
        elif not m["check"]["ok"]:
            errors.append(f"tpcc: {key}: check failed")
    return members, out
