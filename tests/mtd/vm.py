#!/usr/bin/python3
"""vm.py — run a shell script against the kernel's nandsim (raw NAND over Linux MTD) in QEMU.

    vm.py --work DIR --script FILE [--bin PATH ...] [--file SRC:DEST ...]
          [--nandsim "extra params"] [--module NAME[:params] ...] [--memory MiB]
          [--timeout SECONDS] [--log FILE]

The machine has no MTD hardware and its kernel no MTD, so the raw-NAND backend is tested in a
virtual machine: QEMU under TCG (no KVM) boots Debian 12's generic kernel with a busybox
initramfs, loads nandsim, and runs FILE as /test.sh with /dev/mtd0 present.

1. The kernel: DIR/kernel/ holds the package linux-image-amd64 depends on (linux-image-6.1.0-NN-
   amd64), fetched with `apt-get download` and unpacked with `dpkg -x` — never installed. It is
   fetched once; later runs reuse DIR/kernel/ as it is (delete it to move to a newer kernel).
   DIR/kernel/PACKAGE names the package and version.
2. The initramfs (DIR/initramfs.cpio.gz, rebuilt every run, newc format written here): busybox
   and its applet links; the modules nandsim needs in dependency order (modules.dep if the
   package has it — Debian's has not, depmod makes it at install — else each module's .modinfo
   depends=), decompressed; each --bin in /bin/ with the shared libraries and dynamic loader ldd
   names, copied to the same absolute paths (symlinked directories such as /lib -> usr/lib as on
   the host), so a binary linked against the system's libraries runs unchanged; each --file
   SRC:DEST (DEST ending in / takes SRC's name; a directory is copied whole; an ELF file brings its
   libraries as --bin does); FILE as /test.sh.
3. /init mounts proc, sysfs, devtmpfs and a tmpfs on /tmp, insmods mtd, bch, nandcore, nand,
   nandsim (ID bytes 20 aa 00 15: 256 MiB, 2048+64-byte pages, 128 KiB blocks; --nandsim is
   appended, so a later parameter of the same name wins), then each --module NAME (with its
   dependencies, and the params after a colon), waits for /dev/mtd0, prints one
   "PDL-MTD-DEVICE:" line from /sys/class/mtd/mtd0, runs `sh /test.sh` in /tmp, prints
   "PDL-MTD-EXIT=<status>" and powers off at once. A failed step prints "PDL-MTD-FAIL: <why>"
   and the kernel's last messages instead; a panic or oops ends the VM (panic=-1, oops=panic,
   -no-reboot).
4. The serial console streams to stdout and to --log (written line by line: a long run can be
   followed). The exit status is the script's; with no marker (a failed step, a panic, QEMU
   gone, --timeout reached: QEMU is killed) it is 3 and the last line says why. 2: bad
   arguments or a missing tool (qemu-system-x86 and busybox-static,
   Debian packages that ./run installs). A script's own 2 or 3 is not told apart from these.
One run per DIR at a time (a lock on DIR/lock; a second run waits). Standard library only.
"""
import argparse
import fcntl
import gzip
import lzma
import os
import re
import select
import shutil
import stat
import struct
import subprocess
import sys
import time

MODULES = ["nandsim"]  # the leaves; their dependencies are found and loaded first
NANDSIM_ID = "first_id_byte=0x20 second_id_byte=0xaa third_id_byte=0x00 fourth_id_byte=0x15"
MTD_ATTRS = ["type", "size", "erasesize", "writesize", "oobsize", "oobavail", "subpagesize",
             "ecc_strength", "ecc_step_size", "bitflip_threshold"]
MARKER = re.compile(r"PDL-MTD-EXIT=(\d+)\s*$")
FAIL = re.compile(r"PDL-MTD-FAIL: (.*?)\s*$")
DEVICE = re.compile(r"PDL-MTD-DEVICE:")
ESCAPES = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|c)")  # SeaBIOS's terminal resets
PANIC = re.compile(r"(Kernel panic - not syncing: .*?)\s*$")


class Fatal(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def say(message):
    print(f"vm.py: {message}", file=sys.stderr, flush=True)


# ---- the kernel -------------------------------------------------------------------------------

def kernel_package():
    """The versioned package linux-image-amd64 depends on, e.g. linux-image-6.1.0-56-amd64."""
    try:
        out = subprocess.run(["apt-cache", "depends", "linux-image-amd64"], check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise Fatal(2, f"apt-cache depends linux-image-amd64 failed ({e}); run apt-get update")
    names = re.findall(r"Depends:\s*(linux-image-\d\S*)", out)
    if not names:
        raise Fatal(2, "apt-cache names no linux-image-N-amd64 under linux-image-amd64; "
                       "run apt-get update")
    return names[0]


def ensure_kernel(work):
    """DIR/kernel/ with boot/vmlinuz-* and lib/modules/<version>/; fetched when missing."""
    kdir = os.path.join(work, "kernel")
    if not os.path.isfile(os.path.join(kdir, "PACKAGE")):
        package = kernel_package()
        tmp = os.path.join(work, f"kernel.tmp.{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        say(f"fetching {package} (apt-get download, dpkg -x; not installed)")
        try:
            sandbox = ["-o", "APT::Sandbox::User=root"] if os.geteuid() == 0 else []
            subprocess.run(["apt-get", "download", "-q"] + sandbox + [package], cwd=tmp,
                           check=True)
            debs = [f for f in os.listdir(tmp) if f.endswith(".deb")]
            if len(debs) != 1:
                raise Fatal(2, f"apt-get download {package} left {debs}")
            deb = os.path.join(tmp, debs[0])
            root = os.path.join(tmp, "root")
            subprocess.run(["dpkg", "-x", deb, root], check=True)
            version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], check=True,
                                     stdout=subprocess.PIPE, text=True).stdout.strip()
            with open(os.path.join(root, "PACKAGE"), "w") as f:
                f.write(f"{package} {version}\n")
            shutil.rmtree(kdir, ignore_errors=True)  # an incomplete one (no PACKAGE)
            os.rename(root, kdir)
        except (OSError, subprocess.CalledProcessError) as e:
            raise Fatal(2, f"could not fetch the kernel {package}: {e}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(kdir, "PACKAGE")) as f:
        package = f.read().strip()
    boot = os.path.join(kdir, "boot")
    vmlinuz = sorted(f for f in os.listdir(boot) if f.startswith("vmlinuz-"))
    versions = sorted(os.listdir(os.path.join(kdir, "lib", "modules")))
    if len(vmlinuz) != 1 or len(versions) != 1:
        raise Fatal(2, f"{kdir}: expected one vmlinuz and one lib/modules/<version>, found "
                       f"{vmlinuz} {versions}; delete {kdir} to fetch it again")
    return package, os.path.join(boot, vmlinuz[0]), os.path.join(kdir, "lib", "modules",
                                                                  versions[0])


def read_module(path):
    """A module's bytes, decompressed (.ko, .ko.xz, .ko.gz; .ko.zst through the zstd tool)."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        if not shutil.which("zstd"):
            raise Fatal(2, f"{path} is zstd-compressed: install the Debian package zstd")
        return subprocess.run(["zstd", "-dc", path], check=True, stdout=subprocess.PIPE).stdout
    return data


def modinfo_depends(ko):
    """The depends= of an ELF64 module's .modinfo section."""
    if ko[:4] != b"\x7fELF" or ko[4] != 2 or ko[5] != 1:
        raise Fatal(3, "a module is not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", ko, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", ko, 0x3A)

    def section(i):
        name, _, _, _, off, size = struct.unpack_from("<IIQQQQ", ko, shoff + i * shentsize)
        return name, ko[off:off + size]

    _, names = section(shstrndx)
    for i in range(shnum):
        name, body = section(i)
        if names[name:names.index(b"\0", name)] == b".modinfo":
            for entry in body.split(b"\0"):
                if entry.startswith(b"depends="):
                    return [d for d in entry[8:].decode().split(",") if d]
    return []


def modules_in_order(moddir, leaves):
    """[(name, path)] of leaves and their dependencies, each after what it depends on."""
    paths = {}
    for dirpath, _, files in os.walk(os.path.join(moddir, "kernel")):
        for f in files:
            m = re.match(r"(.*)\.ko(\.xz|\.gz|\.zst)?$", f)
            if m:
                paths[m.group(1).replace("-", "_")] = os.path.join(dirpath, f)
    deps = {}
    depfile = os.path.join(moddir, "modules.dep")
    if os.path.isfile(depfile):
        with open(depfile) as f:
            for line in f:
                target, _, rest = line.partition(":")
                name = re.sub(r"\.ko(\.\w+)?$", "", os.path.basename(target)).replace("-", "_")
                deps[name] = [re.sub(r"\.ko(\.\w+)?$", "", os.path.basename(d)).replace("-", "_")
                              for d in rest.split()]
    order, seen = [], set()

    def visit(name, chain):
        name = name.replace("-", "_")
        if name in seen:
            return
        if name in chain:
            raise Fatal(3, f"module dependency cycle: {' -> '.join(chain + [name])}")
        if name not in paths:
            raise Fatal(3, f"module {name} not found under {moddir}/kernel "
                           "(built into the kernel, or not shipped)")
        for d in deps[name] if name in deps else modinfo_depends(read_module(paths[name])):
            visit(d, chain + [name])
        seen.add(name)
        order.append((name, paths[name]))

    for leaf in leaves:
        visit(leaf, [])
    return order


# ---- the initramfs ----------------------------------------------------------------------------

class Archive:
    """A newc cpio archive built in memory: path -> (mode, body); symlinks are followed."""

    def __init__(self):
        self.entries = {"/": (stat.S_IFDIR | 0o755, b"")}

    def resolve(self, path, depth=0):
        """path with every archived symlink among its directories followed."""
        if depth > 20:
            raise Fatal(3, f"initramfs: too many symlinks at {path}")
        out = "/"
        parts = [p for p in path.split("/") if p]
        for i, p in enumerate(parts):
            cur = os.path.join(out, p)
            entry = self.entries.get(cur)
            if entry and stat.S_ISLNK(entry[0]) and i < len(parts) - 1:
                target = entry[1].decode()
                cur = self.resolve(os.path.normpath(os.path.join(out, target)), depth + 1)
            out = cur
        return out

    def mkdir(self, path):
        path = self.resolve(path)
        if path == "/":
            return path
        parent = self.mkdir(os.path.dirname(path))
        path = os.path.join(parent, os.path.basename(path))
        entry = self.entries.get(path)
        if entry is None:
            self.entries[path] = (stat.S_IFDIR | 0o755, b"")
        elif stat.S_ISLNK(entry[0]):
            return self.mkdir(os.path.normpath(os.path.join(parent, entry[1].decode())))
        elif not stat.S_ISDIR(entry[0]):
            raise Fatal(3, f"initramfs: {path} is both a file and a directory")
        return path

    def add(self, path, mode, body=b"", replace=False):
        parent = self.mkdir(os.path.dirname(path))
        path = os.path.join(parent, os.path.basename(path))
        old = self.entries.get(path)
        if old is not None and not replace and old != (mode, body):
            if stat.S_ISDIR(old[0]) and stat.S_ISDIR(mode):
                return
            raise Fatal(3, f"initramfs: {path} added twice, differently")
        self.entries[path] = (mode, body)

    def add_host(self, path):
        """Host file path at the same path, its symlinks (of directories too) as symlinks."""
        parts = [p for p in os.path.abspath(path).split("/") if p]
        cur = ""
        for i, p in enumerate(parts):
            cur += "/" + p
            if os.path.islink(cur):
                existing = self.entries.get(self.resolve(cur))
                if existing is not None and stat.S_ISDIR(existing[0]):
                    continue  # a real directory here already (e.g. /bin): put it inside
                target = os.readlink(cur)
                self.add(cur, stat.S_IFLNK | 0o777, target.encode())
                rest = "/".join(parts[i + 1:])
                dest = os.path.normpath(os.path.join(os.path.dirname(cur), target))
                return self.add_host(dest + ("/" + rest if rest else ""))
        st = os.stat(cur)
        if stat.S_ISDIR(st.st_mode):
            self.mkdir(cur)
        else:
            with open(cur, "rb") as f:
                self.add(cur, stat.S_IFREG | stat.S_IMODE(st.st_mode), f.read())

    def bytes(self):
        out = bytearray()

        def record(ino, name, mode, body, rdev=(0, 0)):
            name_b = name.encode() + b"\0"
            fields = [ino, mode, 0, 0, 2 if stat.S_ISDIR(mode) else 1, 0, len(body), 0, 0,
                      rdev[0], rdev[1], len(name_b), 0]
            out.extend(b"070701" + b"".join(b"%08X" % v for v in fields) + name_b)
            out.extend(b"\0" * (-len(out) % 4))
            out.extend(body)
            out.extend(b"\0" * (-len(out) % 4))

        ino = 1
        for path in sorted(self.entries):  # parents before children
            mode, body = self.entries[path]
            if path != "/":
                record(ino, path.lstrip("/"), mode, body)
                ino += 1
        record(ino, "dev/console", stat.S_IFCHR | 0o600, b"", (5, 1))  # init's stdio
        record(0, "TRAILER!!!", 0, b"")
        return bytes(out)


def shared_libraries(binary):
    """Absolute paths of the libraries and loader ldd names for binary ([] if static)."""
    p = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0 or "not a dynamic executable" in p.stdout \
            or "statically linked" in p.stdout:
        if "not a dynamic executable" in p.stdout or "statically linked" in p.stdout:
            return []
        raise Fatal(2, f"ldd {binary} failed: {p.stdout.strip()}")
    libs = []
    for line in p.stdout.splitlines():
        line = line.strip()
        if "=> not found" in line:
            raise Fatal(2, f"{binary}: ldd finds no {line.split()[0]}")
        m = re.match(r"(?:\S+ => )?(/\S+) \(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


INIT = r"""#!/bin/sh
# /init — made by tests/mtd/vm.py: load nandsim, run /test.sh, print the marker, power off.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/tmp
fail() {
    echo "PDL-MTD-FAIL: $*"
    dmesg | tail -n 20
    poweroff -f
}
mount -t proc proc /proc && mount -t sysfs sysfs /sys && mount -t devtmpfs devtmpfs /dev &&
    mount -t tmpfs tmpfs /tmp || fail "mounting proc, sysfs, devtmpfs or tmpfs failed"
@INSMOD@
n=0
while [ ! -c /dev/mtd0 ]; do
    n=$((n + 1))
    [ $n -le 100 ] || fail "no /dev/mtd0 10 s after nandsim loaded"
    sleep 0.1
done
line="PDL-MTD-DEVICE: mtd0"
for a in @ATTRS@; do
    [ -r /sys/class/mtd/mtd0/$a ] && line="$line $a=$(cat /sys/class/mtd/mtd0/$a)"
done
echo "$line name='$(cat /sys/class/mtd/mtd0/name)'"
cd /tmp
/bin/sh /test.sh
echo "PDL-MTD-EXIT=$?"
poweroff -f
"""


def build_initramfs(args, moddir, out_path):
    a = Archive()
    for d in ["/bin", "/sbin", "/usr/bin", "/usr/sbin", "/proc", "/sys", "/dev", "/tmp",
              "/modules"]:
        a.mkdir(d)
    busybox = "/bin/busybox"
    with open(busybox, "rb") as f:
        a.add("/bin/busybox", stat.S_IFREG | 0o755, f.read())
    for lib in shared_libraries(busybox):  # none for busybox-static
        a.add_host(lib)
    bins = {os.path.basename(b) for b in args.bin}
    applets = subprocess.run([busybox, "--list-full"], check=True, stdout=subprocess.PIPE,
                             text=True).stdout.split()
    for applet in applets:
        if os.path.basename(applet) not in bins and applet != "bin/busybox":
            a.add("/" + applet, stat.S_IFLNK | 0o777, b"/bin/busybox")
    for b in args.bin:
        with open(b, "rb") as f:
            a.add("/bin/" + os.path.basename(b), stat.S_IFREG | 0o755, f.read(), replace=True)
        for lib in shared_libraries(b):
            a.add_host(lib)
    for spec in args.file:
        src, _, dest = spec.partition(":")
        if dest.endswith("/"):
            dest += os.path.basename(os.path.normpath(src))
        if os.path.isdir(src):
            for dirpath, _, files in os.walk(src):
                rel = os.path.relpath(dirpath, src)
                a.mkdir(os.path.normpath(os.path.join(dest, rel)))
                for f in files:
                    s = os.path.join(dirpath, f)
                    with open(s, "rb") as fh:
                        a.add(os.path.normpath(os.path.join(dest, rel, f)),
                              stat.S_IFREG | stat.S_IMODE(os.stat(s).st_mode), fh.read(), True)
        else:
            with open(src, "rb") as fh:
                body = fh.read()
            a.add(dest, stat.S_IFREG | stat.S_IMODE(os.stat(src).st_mode), body, True)
            if body[:4] == b"\x7fELF":  # e.g. a loadable SQLite extension: its libraries too
                for lib in shared_libraries(src):
                    a.add_host(lib)
    with open(args.script, "rb") as f:
        a.add("/test.sh", stat.S_IFREG | 0o755, f.read())
    insmod = []
    extra = dict((m.partition(":")[0].replace("-", "_"), m.partition(":")[2])
                 for m in args.module)
    for name, path in modules_in_order(moddir, MODULES + list(extra)):
        a.add(f"/modules/{name}.ko", stat.S_IFREG | 0o644, read_module(path))
        params = f" {NANDSIM_ID} {args.nandsim}".rstrip() if name == "nandsim" else ""
        if extra.get(name):
            params = " " + extra[name]
        insmod.append(f'insmod /modules/{name}.ko{params} || fail "insmod {name}{params} failed"')
    init = INIT.replace("@INSMOD@", "\n".join(insmod)).replace("@ATTRS@", " ".join(MTD_ATTRS))
    a.add("/init", stat.S_IFREG | 0o755, init.encode())
    tmp = out_path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(gzip.compress(a.bytes(), compresslevel=1, mtime=0))
    os.rename(tmp, out_path)


# ---- the run ----------------------------------------------------------------------------------

def boot(args, vmlinuz, initramfs, log):
    cmd = ["qemu-system-x86_64", "-machine", "accel=tcg", "-cpu", "max", "-smp", "1",
           "-m", str(args.memory), "-nographic", "-no-reboot", "-nic", "none",
           "-kernel", vmlinuz, "-initrd", initramfs,
           "-append", "console=ttyS0 panic=-1 oops=panic quiet"]
    say(" ".join(cmd))
    start = time.monotonic()
    deadline = start + args.timeout
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    status = reason = device_at = None
    marker_at = None
    last = ""
    pending = b""

    def line_seen(raw):
        text = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", "")
        if ESCAPES.search(text):  # a screen reset (SeaBIOS) is taken as a line break
            for part in ESCAPES.sub("\n", text).split("\n"):
                if part:
                    line_text(part)
        else:
            line_text(text)

    def line_text(text):
        nonlocal status, reason, device_at, marker_at, last
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        if log:
            log.write(text + "\n")
        if text.strip():
            last = text.strip()
        if status is not None:
            return
        if m := MARKER.search(text):
            status, marker_at = int(m.group(1)), time.monotonic()
        elif m := FAIL.search(text):
            reason = reason or f"in the VM: {m.group(1)}"
        elif m := PANIC.search(text):
            reason = reason or m.group(1)
        elif DEVICE.search(text) and device_at is None:
            device_at = time.monotonic()

    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                reason = reason or f"timed out after {args.timeout:g} s (QEMU killed); " \
                                   f"last line: {last!r}"
                break
            ready, _, _ = select.select([qemu.stdout], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(qemu.stdout.fileno(), 65536)
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line_seen(raw)
        if pending:
            line_seen(pending)
    finally:
        if qemu.poll() is None:
            qemu.kill()
        code = qemu.wait()
    if status is None and reason is None:
        reason = f"QEMU exited ({code}) with no PDL-MTD-EXIT marker; last line: {last!r}"
    if device_at is not None:
        say(f"boot to /dev/mtd0 ready {device_at - start:.1f} s")
    if marker_at is not None:
        say(f"boot to marker {marker_at - start:.1f} s")
    else:
        say(f"no marker after {time.monotonic() - start:.1f} s")
    return status, reason


def main():
    p = argparse.ArgumentParser(description="Run a script against nandsim in a QEMU VM.")
    p.add_argument("--work", required=True, help="work directory (kernel, initramfs)")
    p.add_argument("--script", required=True, help="shell script, run as /test.sh")
    p.add_argument("--bin", action="append", default=[], help="executable for /bin/ (+ libs)")
    p.add_argument("--file", action="append", default=[], help="SRC:DEST, copied into the VM")
    p.add_argument("--nandsim", default="", help="extra nandsim parameters (e.g. bch=8)")
    p.add_argument("--module", action="append", default=[],
                   help="NAME[:params]: one more module to load after nandsim (e.g. mtdram)")
    p.add_argument("--memory", type=int, default=1024, help="VM memory in MiB (1024)")
    p.add_argument("--timeout", type=float, default=900, help="seconds before QEMU is killed")
    p.add_argument("--log", help="also write the serial output here")
    args = p.parse_args()
    try:
        for tool, package in [("qemu-system-x86_64", "qemu-system-x86"),
                              ("/bin/busybox", "busybox-static")]:
            if not shutil.which(tool):
                raise Fatal(2, f"{tool} is missing: install the Debian package {package} "
                               "(./run installs it)")
        for path in [args.script] + args.bin:
            if not os.path.isfile(path):
                raise Fatal(2, f"{path}: no such file")
        for spec in args.file:
            src, sep, dest = spec.partition(":")
            if not sep or not dest.startswith("/"):
                raise Fatal(2, f"--file {spec}: expected SRC:/ABSOLUTE/DEST")
            if not os.path.exists(src):
                raise Fatal(2, f"--file {spec}: no {src}")
        os.makedirs(args.work, exist_ok=True)
        work = os.path.abspath(args.work)
        with open(os.path.join(work, "lock"), "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                say(f"waiting for another vm.py run on {work}")
                fcntl.flock(lock, fcntl.LOCK_EX)
            package, vmlinuz, moddir = ensure_kernel(work)
            say(f"kernel {package}")
            initramfs = os.path.join(work, "initramfs.cpio.gz")
            build_initramfs(args, moddir, initramfs)
            log = open(args.log, "w", buffering=1) if args.log else None  # line by line
            try:
                status, reason = boot(args, vmlinuz, initramfs, log)
            finally:
                if log:
                    log.close()
        if status is None:
            raise Fatal(3, reason)
        say(f"PDL-MTD-EXIT={status}")
        return status
    except Fatal as e:
        say(f"error: {e}")
        return e.status


if __name__ == "__main__":
    sys.exit(main())
