# shellcheck shell=bash
# ranks.sh: multi-rank runs in which each rank writes its stderr to a file of its own,
# for the tests that count the lines a refused or failed run prints. mpirun, tearing a
# job down once the first rank has exited, may drop the last lines a rank wrote to the
# stderr it merges; a file per rank keeps every line and tells which rank said it.
# Sourced by the tests that need it.
#
#   ranks_to_files "$PWD/case.rank"
#   mpirun -n 3 "${per_rank[@]}" "$bin" ARGS... 2> case.mpirun.err
#   said_once -F "$PWD/case.rank" 3 0 "loomdist: the message" || fails=$((fails + 1))

# The command that runs a rank's program with its stderr in $LD_RANK_ERR.<rank>.
# shellcheck disable=SC2016,SC2034 # expanded by the rank's own shell; used by callers
per_rank=(bash -c 'exec "$0" "$@" 2> "$LD_RANK_ERR.$OMPI_COMM_WORLD_RANK"')

# ranks_to_files PREFIX: the ranks of the runs started from now on with per_rank write
# their stderr to PREFIX.<rank> (an absolute path); the old files go.
ranks_to_files() {
    export LD_RANK_ERR=$1
    rm -f "$1".[0-9]*
}

# ranks_said PREFIX N: every line the N ranks wrote, rank by rank.
ranks_said() {
    local rank
    for ((rank = 0; rank < $2; rank++)); do
        cat "$1.$rank" 2> /dev/null || true
    done
}

# said_once GREP_MODE PREFIX N RANK PATTERN: PATTERN (grep -F or -E, by GREP_MODE)
# matches exactly one line of rank RANK's file and no line of the other ranks' files
# (of N). Otherwise says what it found, and returns 1.
said_once() {
    local mode=$1 prefix=$2 n=$3 speaker=$4 pattern=$5 rank count bad=0
    for ((rank = 0; rank < n; rank++)); do
        if [ ! -e "$prefix.$rank" ]; then
            echo "rank $rank left no stderr file"
            bad=1
            continue
        fi
        count=$(grep -c "$mode" -- "$pattern" "$prefix.$rank")
        if [ "$rank" = "$speaker" ] && [ "$count" != 1 ]; then
            echo "rank $rank said '$pattern' $count times, not once"
            bad=1
        elif [ "$rank" != "$speaker" ] && [ "$count" != 0 ]; then
            echo "rank $rank said '$pattern' $count times; only rank $speaker may"
            bad=1
        fi
    done
    return "$bad"
}
