#!/bin/sh
# run_python.sh ROOT SCRIPT [ARGS...]: run a test script under the Python the report
# itself uses (analysis/find-python picks it), with the analysis package and the test
# helpers importable.
root=$1
shift
python=$("$root/analysis/find-python") || exit 1
PYTHONPATH="$root:$root/tests/analysis${PYTHONPATH:+:$PYTHONPATH}" exec "$python" "$@"
