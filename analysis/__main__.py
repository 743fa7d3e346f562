"""The loomdist-report command: files or folders in, one report folder out.

Exit status: 0 when a report was written, 2 when no usable input file remained (every
problem is named on stderr), 1 when the report folder could not be written.
"""
import sys

from . import command_line, experiments, load, predicted, report, validation

PROG = "loomdist-report"


def parse_args(argv):
    """Options: the paths to read and the report folder to write."""
    parser = command_line(
        PROG, "Turn loomdist HDF5 runs (local runs, Slurm sweeps or both) into a report "
        "folder: report.md, figures/*.png and tables/*.csv.", "[OPTIONS] PATH...")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="HDF5 files, or folders searched recursively for *.h5 and *.hdf5")
    parser.add_argument("-o", "--output", default="report", metavar="DIR",
                        help="report folder to write (default: report)")
    parser.add_argument("--predicted", action="append", default=[], metavar="CSV",
                        help="a simulated sweep (sim/predict.py sweep): a section and a "
                        "table of its own, labelled predicted")
    parser.add_argument("--validation", action="append", default=[], metavar="CSV",
                        help="the skeleton's validation (sim/predict.py validate --csv): "
                        "predicted against measured, in a section of its own")
    return parser.parse_args(argv)


def main(argv=None):
    """Load, group, report; the exit status tells a script whether a report exists."""
    args = parse_args(argv)
    runs, problems = load.load_all(args.paths)
    if not runs:
        for line in problems:
            print(f"{PROG}: {line}", file=sys.stderr)
        print(f"{PROG}: no usable loomdist file in {' '.join(args.paths)}; no report written",
              file=sys.stderr)
        return 2
    grouped, notes = experiments.group_experiments(runs)
    problems += notes
    for line in problems:
        print(f"{PROG}: {line}", file=sys.stderr)
    try:
        simulated = predicted.load(args.predicted)
        validated = validation.load(args.validation)
    except (OSError, ValueError) as err:
        print(f"{PROG}: --predicted or --validation: {err}", file=sys.stderr)
        return 2
    try:
        path = report.write(args.output, runs, grouped, problems, simulated, validated)
    except OSError as err:
        print(f"{PROG}: cannot write the report in {args.output}: {err.strerror or err}",
              file=sys.stderr)
        return 1
    print(f"{PROG}: wrote {path} from {len(runs)} file{'s' if len(runs) != 1 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
