# clearinghouse.sh, sourced by the settle http tests: start loomdist-clearinghouse on
# a free port of 127.0.0.1 and learn the port from its first line.
#
# start_clearinghouse BINARY: sets pid and port (empty when it never said where it
# listens, within 5 s or before it exited); its stdout goes to ch.out, its stderr to
# ch.err, in the current folder.
start_clearinghouse() {
    : > ch.out # there before the first look: the child opens it only once it runs
    "$1" --listen 127.0.0.1:0 > ch.out 2> ch.err &
    pid=$!
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)$|\1|p' ch.out)
        [ -n "$port" ] && return
        kill -0 "$pid" 2> /dev/null || return
        sleep 0.05
    done
}
