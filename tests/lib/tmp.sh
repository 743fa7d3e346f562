# shellcheck shell=bash
# tmp.sh: a folder for a server a test starts as another user (PostgreSQL runs as
# postgres when the test is root). That user may not enter the build tree (a clone in
# /root, mode 0700), so the folder is a new one under /tmp; a file in the build tree
# records it, so that the next run reaps what a run killed at its timeout left there.

# reaped_tmp RECORD: reap the folder RECORD names, if a run left one: each PostgreSQL
# whose pid file lies in it is stopped at once (by that pid, once /proc says it is a
# postgres), then the folder and RECORD go. Then make a new folder (mode 0755: any
# user may search it), write its path to RECORD and print it.
reaped_tmp() {
    local record=$1 old pidfile pid d
    old=$(cat "$record" 2> /dev/null || true)
    case "$old" in
    "${TMPDIR:-/tmp}"/loomdist-test.??????)
        while IFS= read -r pidfile; do
            pid=$(head -n 1 "$pidfile")
            [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = postgres ] && kill -QUIT "$pid"
        done < <(find "$old" -name postmaster.pid 2> /dev/null)
        sleep 1
        rm -rf "$old"
        ;;
    esac
    rm -f "$record"
    d=$(mktemp -d "${TMPDIR:-/tmp}/loomdist-test.XXXXXX") || return 1
    chmod 755 "$d"
    echo "$d" > "$record"
    echo "$d"
}
