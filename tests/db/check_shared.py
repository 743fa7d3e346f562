"""One database for the whole job, in an HDF5 file of settle --db-url rank0.

  check_shared.py FILE NODES STOCK
      the ranks ran on NODES nodes, and on every rank, strategy and iteration
      db_backends, the server's client backends that rank's check counted, is at
      least ranks x STOCK + 1: every rank's stock of STOCK connections (open
      from prepare to the job's end) and the check's own, so every rank, on
      every node, was on one server; a rank on a server of its own counts
      STOCK + 1
"""
import sys

import h5py
import numpy as np

STRATEGIES = ("threads", "green", "green-pinned", "green-monitor", "callbacks")


def main(path, nodes, stock):
    failures = []
    with h5py.File(path, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else str(n)
                 for n in f["ranks/node_name"][...]]
        ranks = len(names)
        if len(set(names)) != nodes:
            failures.append(f"ranks ran on {sorted(set(names))}, want {nodes} nodes")
        want = ranks * stock + 1
        for s in STRATEGIES:
            got = f[f"settle/{s}/db_backends"][...]
            if got.shape[1] != ranks or not np.all(got >= want):
                failures.append(f"{s}: db_backends {got.tolist()}, want >= {want}")
        print(f"ranks on {names}; db_backends at least {want}, seen "
              f"{min(int(f[f'settle/{s}/db_backends'][...].min()) for s in STRATEGIES)}")
    for line in failures:
        print("FAIL", line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
