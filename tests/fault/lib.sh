# shellcheck shell=bash
# lib.sh: what the fault tests share; each test sources it. A run goes into the
# background under a hard time limit, the test watches its stderr for the moment to
# strike, and afterwards checks how the run ended and that nothing was left behind.
#
# Runs write absolute --output paths inside the work folder, so a process left over
# from a test can be told apart from every other process on the machine.

# shellcheck source=../lib/ranks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/ranks.sh"

fails=0
run_name=setup
run_ranks=0
run_rc=0
run_s=0
mark_at=$SECONDS

# fail MESSAGE: one failed check, counted and shown with the run's stderr.
fail() {
    echo "FAIL ($run_name): $*"
    fails=$((fails + 1))
}

# fresh WORKDIR: an empty work folder, entered.
fresh() {
    rm -rf "$1"
    mkdir -p "$1"
    cd "$1" || exit 1
}

# launch NAME COMMAND...: start the command in the background, killed after
# $launch_limit s (default 120) in any case, stdout in NAME.out and stderr in NAME.err.
# Sets run_pid and run_name.
launch() {
    run_name=$1
    run_ranks=0
    shift
    mark
    timeout -s KILL "${launch_limit:-120}" "$@" > "$run_name.out" 2> "$run_name.err" &
    run_pid=$!
}

# launch_ranked NAME N ARGS...: launch NAME mpirun -n N ARGS..., each rank's stderr in
# NAME.rank.<rank> (ranks.sh), mpirun's own in NAME.err; finish_run then appends the
# ranks' lines to NAME.err, so that lines and expect_lines see them all.
launch_ranked() {
    local name=$1 n=$2
    ranks_to_files "$PWD/$name.rank"
    shift 2
    launch "$name" mpirun -n "$n" "${per_rank[@]}" "$@"
    run_ranks=$n
}

# mark: the moment from which finish_run counts the run's seconds.
mark() {
    mark_at=$SECONDS
}

# finish_run: wait for the background run; run_rc is its status, run_s the whole
# seconds since the last mark.
finish_run() {
    run_rc=0
    wait "$run_pid" || run_rc=$?
    run_s=$((SECONDS - mark_at))
    if [ "$run_ranks" -gt 0 ]; then
        ranks_said "$LD_RANK_ERR" "$run_ranks" >> "$run_name.err"
    fi
}

# expect_said RANK PATTERN: of the ranks of the last launch_ranked, RANK said a line
# matching the extended regex once, and no other rank said one.
expect_said() {
    local why
    why=$(said_once -E "$LD_RANK_ERR" "$run_ranks" "$1" "$2") || fail "$why"
}

# await PATTERN [FILE]: wait up to 60 s for a line of FILE (the run's stderr if none
# is named) to match the regex.
await() {
    local i file=${2:-$run_name.err}
    for ((i = 0; i < 600; i++)); do
        grep -qsE -- "$1" "$file" && return 0
        sleep 0.1
    done
    fail "no line matching '$1' in $file within 60 s"
    return 1
}

# child_of PID NAME: the pid of PID's child process called NAME, once it exists.
child_of() {
    local i pid
    for ((i = 0; i < 100; i++)); do
        pid=$(pgrep -P "$1" -x "$2" | head -n 1 || true)
        [ -n "$pid" ] && echo "$pid" && return 0
        sleep 0.1
    done
    return 1
}

# lines PATTERN: how many lines of the run's stderr match the extended regex.
lines() {
    grep -cE -- "$1" "$run_name.err" || true
}

# expect_lines COUNT PATTERN: exactly COUNT lines of the run's stderr match.
expect_lines() {
    local n
    n=$(lines "$2")
    [ "$n" = "$1" ] || fail "$n lines match '$2', not $1"
}

# did_no_work: no strategy reported an iteration, so the run stopped before any work.
did_no_work() {
    expect_lines 0 'iteration [0-9]+/[0-9]+'
}

# nothing_under OUTPUT: no file under the output name, and no temporary file either.
nothing_under() {
    [ ! -e "$1" ] || fail "$1 exists"
    [ ! -e "$1.tmp" ] || fail "$1.tmp exists"
}

# no_survivors TAG: within 10 s, no process is left whose command line holds TAG.
no_survivors() {
    local i
    for ((i = 0; i < 100; i++)); do
        pgrep -f -- "$1" > /dev/null || return 0
        sleep 0.1
    done
    fail "processes left running: $(pgrep -af -- "$1" | tr '\n' ';')"
}

# verdict: after a case, its stderr if any check of it failed; resets the count.
case_fails=0
verdict() {
    if [ "$fails" -gt "$case_fails" ]; then
        echo "stderr of $run_name (status $run_rc after $run_s s):"
        sed 's/^/    /' "$run_name.err"
    fi
    case_fails=$fails
}

# finish SUMMARY: exit 1 if any case failed, else say what held.
finish() {
    if [ "$fails" -gt 0 ]; then
        echo "$fails check(s) failed"
        exit 1
    fi
    echo "$1"
}
