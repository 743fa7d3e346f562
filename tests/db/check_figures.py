"""settle --db postgres's figures in one HDF5 file.

  check_figures.py FILE POOL PIPES CARRIERS
      every strategy has its round-trip figures, p50 <= p99 <= max, all > 0, and
      db_connections, on every rank and iteration, is POOL (threads' --db-conns,
      at most --os-threads) for threads and CARRIERS x PIPES for the others, and
      db_opened is 0: every connection came from the stock made before the
      clock; db_backends, on one rank, is at least the stock (the larger of POOL
      and CARRIERS x PIPES) and the check's own connection; threads alone has
      its pool's waits, db_wait_p50 <= db_wait_p99 <= db_wait_max and db_waited
  check_figures.py backends FILE N
      db_backends is N in every strategy, rank and iteration: on a server of the
      run's own, what the ranks opened, their checks' included
"""
import sys

import h5py
import numpy as np

STRATEGIES = ("threads", "green", "green-pinned", "green-monitor", "callbacks")


def main(path, threads, pipes, carriers):
    failures = []
    with h5py.File(path, "r") as f:
        for s in STRATEGIES:
            g = f[f"settle/{s}"]
            want = threads if s == "threads" else carriers * pipes
            got = g["db_connections"][...]
            if not np.all(g["db_opened"][...] == 0):
                failures.append(f"{s}: db_opened {g['db_opened'][...].tolist()}, want 0")
            if not np.all(got == want):
                failures.append(f"{s}: db_connections {got.tolist()}, want {want}")
            backends = g["db_backends"][...]
            if not np.all(backends >= max(threads, carriers * pipes) + 1):
                failures.append(f"{s}: db_backends {backends.tolist()}, want at least "
                                f"{max(threads, carriers * pipes) + 1}")
            waits = [n for n in ("db_wait_p50", "db_wait_p99", "db_wait_max", "db_waited")
                     if n in g]
            if s == "threads" and len(waits) != 4:
                failures.append(f"threads: pool waits {waits}, want all four")
            elif s == "threads":
                p50, p99, top = (g[n][...] for n in waits[:3])
                if not (np.all(p50 >= 0) and np.all(p50 <= p99) and np.all(p99 <= top)):
                    failures.append(f"threads: db_wait p50 {p50}, p99 {p99}, max {top}")
            elif waits:
                failures.append(f"{s}: has pool waits {waits}, but only threads pools")
            for call in ("fetch", "update"):
                p50, p99, top = (g[f"db_{call}_{q}"][...] for q in ("p50", "p99", "max"))
                if not (np.all(p50 > 0) and np.all(p50 <= p99) and np.all(p99 <= top)):
                    failures.append(f"{s}: db_{call} p50 {p50}, p99 {p99}, max {top}")
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


def backends(path, n):
    failures = []
    with h5py.File(path, "r") as f:
        for s in f["settle"]:
            g = f[f"settle/{s}"]
            if not isinstance(g, h5py.Group) or "db_backends" not in g:
                continue
            got = f[f"settle/{s}/db_backends"][...]
            if not np.all(got == n):
                failures.append(f"{s}: db_backends {got.tolist()}, want {n}")
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "backends":
        sys.exit(backends(sys.argv[2], int(sys.argv[3])))
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
