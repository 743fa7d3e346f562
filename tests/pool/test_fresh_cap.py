#!/usr/bin/env python3
"""The pool server's fresh mode holds no more live green threads than its connection
bound, whatever its clients pipeline.

Usage: test_fresh_cap.py POOL_SERVER CLEARINGHOUSE

loomdist-pool-server runs fresh, on one carrier, for 1 client (a bound of 1 + 64
connections, so at most 65 green threads), against a clearinghouse that thinks
500 ms. Three clients pipeline 32 requests each, 96 in all, before any is answered:
at most 65 are served, the rest answered 503, and a server without the cap serves
all 96 at once. Only 127.0.0.1; every wait is bounded.
"""
import socket
import subprocess
import sys
import time

CLIENTS = 3
PIPELINE = 32
THREADS_MAX = 1 + 64  # --connections 1, and the server's 64 spare connections


def fail(why):
    print("FAIL: " + why, file=sys.stderr)
    sys.exit(1)


def first_line(p, what):
    line = p.stdout.readline()
    if not line:
        fail(f"{what} said nothing")
    return line


def statuses(sock, n):
    """The statuses of n responses on sock, each with a Content-Length."""
    data = b""
    out = []
    sock.settimeout(20)
    while len(out) < n:
        head_end = data.find(b"\r\n\r\n")
        if head_end < 0:
            chunk = sock.recv(65536)
            if not chunk:
                fail(f"the connection ended after {len(out)} responses")
            data += chunk
            continue
        head = data[:head_end].decode()
        length = 0
        for line in head.split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if len(data) < head_end + 4 + length:
            data += sock.recv(65536)
            continue
        out.append(int(head.split()[1]))
        data = data[head_end + 4 + length:]
    return out


def main():
    ch = subprocess.Popen([sys.argv[2], "--listen", "127.0.0.1:0", "--quiet"],
                          stdout=subprocess.PIPE, text=True)
    server = None
    try:
        backend = first_line(ch, "the clearinghouse").rsplit("//", 1)[1].strip()
        server = subprocess.Popen(
            [sys.argv[1], "--backend", backend, "--think-ms", "500", "--mode", "fresh",
             "--carriers", "1", "--connections", "1"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = first_line(server, "the pool server")
        if not ready.startswith("ready port="):
            fail(f"the pool server said {ready!r}")
        port = int(ready.split()[1].split("=")[1])
        request = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n"
        socks = [socket.create_connection(("127.0.0.1", port), timeout=5)
                 for _ in range(CLIENTS)]
        for s in socks:
            s.sendall(request * PIPELINE)
        seen = []
        for s in socks:
            seen += statuses(s, PIPELINE)
            s.close()
        served, refused = seen.count(200), seen.count(503)
        if served + refused != len(seen):
            fail(f"statuses other than 200 and 503: {sorted(set(seen))}")
        if served > THREADS_MAX or refused == 0:
            fail(f"{served} served and {refused} refused of {len(seen)} pipelined: the "
                 f"server ran more than {THREADS_MAX} green threads at once")
        print(f"ok: {served} served, {refused} refused 503 of {len(seen)} pipelined")
    finally:
        if server:
            server.stdin.close()
            server.wait(timeout=20)
        ch.terminate()
        ch.wait(timeout=10)


if __name__ == "__main__":
    main()
