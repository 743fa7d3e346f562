#!/usr/bin/env python3
"""What clients that pipeline and vanish can make loomdist-clearinghouse hold.

Usage: test_clearinghouse_held.py BINARY

The clearinghouse runs with its default bounds. A client connects, pipelines 32
`GET /think?ms=60000` requests with 64 KiB bodies (each a 60 s wait the server holds),
and resets the connection, over and over: every request it leaves behind is an orphan
for a minute (a connection paused at its pipeline may not see the reset until then).
The server's resident memory must stay within RSS_GROWTH_MAX of what it was at the
start, and once what it holds reaches its bounds (4096 requests, 32 MiB of bodies) a
fresh client sending the same request must be answered 503. A server without those
bounds grows by the client's bandwidth, about 128 KiB per request, until the loop
gives up. Only 127.0.0.1; every wait is bounded.
"""
import os
import socket
import struct
import subprocess
import sys
import time

PIPELINE = 32
BODY = b"x" * 65536
RSS_GROWTH_MAX = 96 << 20  # bytes; the requests the bound admits cost ~128 KiB each
ROUNDS = 400  # 12,800 requests: three times the default bound of 4096


def fail(why):
    print("FAIL: " + why, file=sys.stderr)
    sys.exit(1)


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    fail("no VmRSS for the server")


def start(binary):
    # Under ASan, what the server frees waits in a quarantine (256 MiB by default) before
    # it can be reused, which would count here as memory the server holds: a small one
    # keeps the measure to what the server keeps. Other builds ignore the variable.
    env = dict(os.environ)
    asan = [env["ASAN_OPTIONS"]] if env.get("ASAN_OPTIONS") else []
    env["ASAN_OPTIONS"] = ":".join(asan + ["quarantine_size_mb=4"])
    p = subprocess.Popen([binary, "--listen", "127.0.0.1:0", "--quiet"],
                         stdout=subprocess.PIPE, text=True, env=env)
    line = p.stdout.readline()
    if "listening on http://127.0.0.1:" not in line:
        p.kill()
        fail(f"the clearinghouse said {line!r}")
    return p, int(line.rsplit(":", 1)[1])


def think(ms, close=b""):
    return (b"GET /think?ms=%d HTTP/1.1\r\nHost: t\r\n%sContent-Length: %d\r\n\r\n"
            % (ms, close, len(BODY))) + BODY


def pipeline_and_reset(port):
    """32 held requests, then a reset: the server orphans those it has read."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(think(60000) * PIPELINE)
        time.sleep(0.005)  # let the server read them before the reset drops them
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def status_of_fresh_client(port):
    """A fresh client's answer to /think?ms=0 with a body: 200, or 503 past a bound."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(think(0, b"Connection: close\r\n"))
        head = s.recv(64)
    if not head.startswith(b"HTTP/1.1 "):
        fail(f"a fresh client was answered {head!r}")
    return int(head.split()[1])


def main():
    server, port = start(sys.argv[1])
    try:
        if status_of_fresh_client(port) != 200:
            fail("a fresh client was refused before any load")
        base = rss(server.pid)
        for i in range(1, ROUNDS + 1):
            pipeline_and_reset(port)
            grown = rss(server.pid) - base
            if grown > RSS_GROWTH_MAX:
                fail(f"the server grew by {grown >> 20} MiB after {i * PIPELINE} "
                     f"requests left behind (bound {RSS_GROWTH_MAX >> 20} MiB)")
            if i % 8 == 0 and status_of_fresh_client(port) == 503:
                print(f"ok: 503 after {i * PIPELINE} requests left behind, the server "
                      f"grown by {grown >> 20} MiB")
                return
        fail(f"no 503 after {ROUNDS * PIPELINE} requests left behind")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
