#!/usr/bin/env bash
# cmake --install into a temporary prefix, outside the source and build trees: the
# layout is what docs/install.md says, no installed text file names either tree, and from
# a folder of its own, with the trees off PATH, the installed loomdist runs, its
# loomdist-report reads the file, the installed settle.sbatch finds the installed
# loomdist (not on PATH), and every command's man page renders.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR LD_MAN(ON|OFF)
set -euo pipefail
build=$1 src=$2 man=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/loomdist-install.XXXXXX")
trap 'rm -rf -- "$work"' EXIT
prefix=$work/prefix
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cmake --install "$build" --prefix "$prefix" >"$work/install.log" ||
    { cat "$work/install.log"; fail "cmake --install failed"; }

# The layout: every command in bin, the analysis, Slurm and SimGrid files in share.
commands=(loomdist loomdist-clearinghouse loomdist-load loomdist-forks
    loomdist-pool-server loomdist-pingpong loomdist-report loomdist-models loomdist-pool)
for c in "${commands[@]}"; do
    [[ -x $prefix/bin/$c ]] || fail "bin/$c is not installed"
done
for f in analysis/__init__.py analysis/__main__.py analysis/_version.py analysis/find-python \
    slurm/settle.sbatch slurm/sweep slurm/local-cluster sim/predict.py sim/platforms/local.xml; do
    [[ -f $prefix/share/loomdist/$f ]] || fail "share/loomdist/$f is not installed"
done
extra=$(find "$prefix/bin" -mindepth 1 -printf '%f\n' | sort | comm -13 <(printf '%s\n' "${commands[@]}" | sort) -)
[[ -z $extra ]] || fail "bin holds what this test does not know: $extra"
for f in README.md ARCHITECTURE.md docs/install.md docs/options.md docs/schema.md; do
    [[ -f $prefix/share/doc/loomdist/$f ]] || fail "share/doc/loomdist/$f is not installed"
done

# No installed text names the trees it came from (binaries keep their debug info's
# source paths, which name nothing they open).
named=$(grep -rIl -e "$src" -e "$build" "$prefix" || true)
[[ -z $named ]] || fail "installed files name the source or build tree: $named"

# A user's folder elsewhere, PATH without either tree and without the install.
home=$work/elsewhere
mkdir -p "$home"
cd "$home"
plain=/usr/local/bin:/usr/bin:/bin
PATH=$prefix/bin:$plain loomdist --trades 400 --latency-scale 0.02 --output run.h5 >run.log ||
    { cat run.log; fail "the installed loomdist failed"; }
PATH=$plain "$prefix/bin/loomdist-report" run.h5 -o report >report.log 2>&1 ||
    { cat report.log; fail "the installed loomdist-report failed"; }
[[ -s report/report.md ]] || fail "loomdist-report wrote no report/report.md"
cache=$(find "$prefix" -name __pycache__)
[[ -z $cache ]] || fail "running the analysis wrote bytecode into the install: $cache"
want=$("$prefix/bin/loomdist" --version | cut -d' ' -f2-)
got=$(PATH=$plain "$prefix/bin/loomdist-report" --version | cut -d' ' -f2-)
[[ $got == "$want" ]] || fail "loomdist-report --version says '$got', loomdist '$want'"

# settle.sbatch outside Slurm (mpirun, one rank): the loomdist installed with it.
env -u LOOMDIST_BIN PATH=$plain LOOMDIST_OUTPUT=sbatch.h5 \
    bash "$prefix/share/loomdist/slurm/settle.sbatch" --trades 400 --latency-scale 0.02 \
    >sbatch.log 2>&1 || { cat sbatch.log; fail "the installed settle.sbatch failed"; }
grep -qx "settle.sbatch: binary=$prefix/bin/loomdist" sbatch.log ||
    { cat sbatch.log; fail "settle.sbatch did not run the installed loomdist"; }
[[ -s sbatch.h5 ]] || fail "settle.sbatch wrote no sbatch.h5"

if [[ $man != ON ]]; then
    echo "install: layout, loomdist, loomdist-report and settle.sbatch from $prefix (LD_MAN off: no man pages)"
    exit 0
fi
for c in "${commands[@]}"; do
    page=$prefix/share/man/man1/$c.1
    [[ -s $page ]] || fail "no man page for $c"
    MANWIDTH=80 man -l "$page" >"$c.txt" 2>"$c.err" || { cat "$c.err"; fail "man -l $page failed"; }
    if ! grep -q "^NAME" "$c.txt" || ! grep -q "^SYNOPSIS" "$c.txt"; then
        cat "$c.txt"
        fail "man $c has no NAME or SYNOPSIS"
    fi
    [[ ! -s $c.err ]] || { cat "$c.err"; fail "man $c warned"; }
done
# Looked up by name, as a user with the prefix's MANPATH would.
MANPATH=$prefix/share/man MANWIDTH=80 man loomdist >man.txt ||
    fail "man loomdist: not found under MANPATH=$prefix/share/man"
grep -q "mpirun -n RANKS loomdist" man.txt || { cat man.txt; fail "man loomdist lacks its usage"; }
echo "install: layout, loomdist, loomdist-report, settle.sbatch and ${#commands[@]} man pages from $prefix"
