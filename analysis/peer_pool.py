"""Go's peer of the pool job, driven as the pool job drives itself: `seedbench backend`
(think time) and `seedbench pool-server` (net/http, a goroutine per connection, or N
pooled workers) on loopback ports the kernel picks, then wrk with one thread at the
given connections, a warm-up run first and the measured run second.

Used by loomdist-study's pooling sitting and by scripts/bench-pool-go, so both measure
the peer the same way. As a command:
    python3 analysis/peer_pool.py SEEDBENCH CONNECTIONS WARMUP_S MEASURE_S [WORKERS]
prints the measured requests per second.
"""
import re
import resource
import socket
import subprocess
import sys
import time
import urllib.request

THINK_MS = 30


def _free_port():
    """A loopback port nobody holds now, by asking the kernel for one."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _await(url, seconds=10.0):
    """Wait until url answers, or raise after `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answered at {url} within {seconds:.0f} s")


def _wrk_rps(url, connections, seconds):
    """wrk's requests per second over `seconds` at url, one wrk thread."""
    out = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", url],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"^Requests/sec:\s*([\d.]+)", out, re.M)
    if not m:
        raise RuntimeError(f"wrk printed no Requests/sec line: {out.strip()[-200:]}")
    return float(m.group(1))


def go_pool_rps(seedbench, connections, warmup_s, measure_s, workers=0):
    """Go's pool-server's requests per second, its backend and server started afresh."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    backend = f"127.0.0.1:{_free_port()}"
    server = f"127.0.0.1:{_free_port()}"
    procs = [subprocess.Popen([seedbench, "backend", backend, str(THINK_MS)],
                              stderr=subprocess.DEVNULL)]
    try:
        procs.append(subprocess.Popen([seedbench, "pool-server", server,
                                       f"http://{backend}/", str(workers)],
                                      stderr=subprocess.DEVNULL))
        _await(f"http://{server}/")
        _wrk_rps(f"http://{server}/", connections, warmup_s)
        return _wrk_rps(f"http://{server}/", connections, measure_s)
    finally:
        for p in procs:
            p.kill()
            p.wait()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        print("usage: peer_pool.py SEEDBENCH CONNECTIONS WARMUP_S MEASURE_S [WORKERS]",
              file=sys.stderr)
        sys.exit(2)
    seedbench, numbers = sys.argv[1], [int(a) for a in sys.argv[2:]]
    print(f"{go_pool_rps(seedbench, *numbers):.1f}")
