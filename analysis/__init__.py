"""loomdist analysis: many loomdist HDF5 runs turned into one report folder of tables,
figures and findings. Run it as `analysis/loomdist-report PATH...`."""

import argparse

try:  # an installed copy: the build wrote the version of the binaries beside it
    from ._version import VERSION
except ImportError:  # the source tree, where no build wrote one
    VERSION = "(source tree)"


class _HelpFormat(argparse.HelpFormatter):
    """argparse's help with "Usage:" as GNU tools write it, which help2man reads."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "Usage: " if prefix is None else prefix)


def command_line(prog, description, usage):
    """A parser for one of the analysis' commands: its usage line, and --version."""
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     usage=f"%(prog)s {usage}", formatter_class=_HelpFormat)
    parser.add_argument("--version", action="version", version=f"{prog} {VERSION}")
    return parser
