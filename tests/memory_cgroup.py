"""Whether this process may make a memory cgroup as loomdist's profile does
(lib/sys/confine.c): find its group in the hierarchy that holds the memory controller
(v1) or the unified one (v2), make a child group there, give it a limit and move a
process into it. Exit 0 and say which version where all of that works; exit 77 and
say which step failed where none does, so that a test of a memory limit is skipped
there and is otherwise held to the limit being granted.
Usage: memory_cgroup.py [v1|v2]   (no argument: either, v1 first, as loomdist tries)
"""
import os
import subprocess
import sys

LIMIT_FILE = {1: "memory.limit_in_bytes", 2: "memory.max"}
SKIP = 77


def group_path(v):
    """The process's group within version v's hierarchy, from /proc/self/cgroup."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            num, ctl, path = line.rstrip("\n").split(":", 2)
            unified = num == "0" and ctl == ""
            if (unified if v == 2 else not unified and "memory" in ctl.split(",")):
                return path
    return None


def mount_of(v):
    """(mount point, root shown there) of version v's hierarchy, from mountinfo."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fstype, _, superopts = (right.split() + ["", "", ""])[:3]
            root, point = left.split()[3:5]
            if (fstype == "cgroup2" if v == 2 else
                    fstype == "cgroup" and "memory" in superopts.split(",")):
                return point, root
    return None


def home(v):
    """The folder of the process's group of version v, or None."""
    path, mount = group_path(v), mount_of(v)
    if path is None or mount is None:
        return None
    point, root = mount
    rel = path[len(root):] if root != "/" and path.startswith(root) else path
    return point + ("" if rel == "/" else rel)


def write(folder, name, text):
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)


def try_version(v):
    """None where a limited group took a process; else the step that failed."""
    folder = home(v)
    if folder is None:
        return "no memory hierarchy"
    if v == 2:
        try:
            write(folder, "cgroup.subtree_control", "+memory")
        except OSError:
            pass  # loomdist ignores it too: the parent may enable it already
    group = os.path.join(folder, f"loomdist-probe-{os.getpid()}")
    try:
        os.mkdir(group)
    except OSError as e:
        return f"cannot make a group in {folder}: {e.strerror}"
    child = subprocess.Popen(["sleep", "30"])
    try:
        write(group, LIMIT_FILE[v], str(256 << 20))
        write(group, "cgroup.procs", str(child.pid))
        with open(f"/proc/{child.pid}/cgroup") as f:
            if os.path.basename(group) not in f.read():
                return f"a process written to {group} is not in it"
        return None
    except OSError as e:
        return f"cannot limit {group} or move a process in: {e.strerror}"
    finally:
        child.kill()
        child.wait()
        try:
            os.rmdir(group)
        except OSError:
            pass


def main(argv):
    versions = {"v1": [1], "v2": [2]}.get(argv[1] if len(argv) > 1 else "", [1, 2])
    why = []
    for v in versions:
        failed = try_version(v)
        if failed is None:
            print(f"a memory cgroup can be made here (v{v})")
            return 0
        why.append(f"v{v}: {failed}")
    print("no memory cgroup can be made here (" + "; ".join(why) + "): skipped")
    return SKIP


if __name__ == "__main__":
    sys.exit(main(sys.argv))
