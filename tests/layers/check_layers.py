#!/usr/bin/env python3
"""The layers, read from the link graph: which target's code uses which, by symbol.

Usage: check_layers.py NM RULES NAME=FILES... [program:NAME=FILE...]

NAME=FILES is a target: an archive, or an object library's objects joined by ','.
program:NAME=FILE is a linked program. RULES lists the targets bottom to top, one line
a layer (see tests/layers/layers.txt). It fails, saying where, when:
  - a target is not in RULES, or RULES names a target that was not given;
  - two files of one target call one another, directly or round a loop;
  - a target uses a symbol defined by a target on its own line or a line above it;
  - a program is not in RULES, or holds code of a target above the highest layer its
    line allows;
  - a target calls an outside library's functions that an `only` line keeps for others
    (MPI and HDF5 for the driver, libpq, exit()).
A word of a layer line may be a pattern (ld_job_*): a target takes the line of its own
name if it has one, else of the first pattern it matches.
"""
import subprocess
import fnmatch
import sys
from collections import defaultdict


def nm(nm_cmd, files, which):
    """(member, symbol) pairs: `which` is --defined-only or --undefined-only."""
    out = subprocess.run([nm_cmd, "-A", "-g", which] + files, check=True,
                         capture_output=True, text=True).stdout
    pairs = set()
    for line in out.splitlines():
        head, _, rest = line.rpartition(":")
        fields = rest.split()
        if not fields:
            continue
        member = head.rsplit(":", 1)[-1].rsplit("/", 1)[-1]
        for suffix in (".o", ".c", ".S"):
            member = member[: -len(suffix)] if member.endswith(suffix) else member
        pairs.add((member, fields[-1]))
    return pairs


def read_rules(path):
    """Each name or pattern's layer (its line's index), the programs' rules, and the
    `only` rules as (symbol prefixes, targets that may call them)."""
    layer, programs, only = {}, {}, []
    for line in open(path, encoding="utf-8"):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "program":
            programs[words[1]] = words[2:]
        elif words[0] == "only":
            prefixes, _, names = " ".join(words[1:]).partition(":")
            only.append((tuple(prefixes.split()), names.split()))
        else:
            n = len(set(layer.values()))
            for w in words:
                layer[w] = n
    return layer, programs, only


def layers_of(names, rules):
    """Each target's layer: its own name's line, else the first pattern's it matches."""
    out = {}
    for name in names:
        if name in rules:
            out[name] = rules[name]
            continue
        for pattern, n in rules.items():
            if fnmatch.fnmatchcase(name, pattern):
                out[name] = n
                break
    return out


def find_loop(edges):
    """A cycle in {node: {nodes it uses}} as a list, or None (depth-first, colours)."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):]
            if m not in state:
                loop = visit(m)
                if loop:
                    return loop
        state[n] = 2
        stack.pop()
        return None

    for n in sorted(edges):
        if n not in state:
            loop = visit(n)
            if loop:
                return loop
    return None


def bottom_to_top(edges, nodes):
    """The nodes, each after every node it uses."""
    done, order = set(), []

    def visit(n):
        if n in done:
            return
        done.add(n)
        for m in sorted(edges.get(n, ())):
            visit(m)
        order.append(n)

    for n in sorted(nodes):
        visit(n)
    return order


def main(argv):
    nm_cmd, rules_path, specs = argv[1], argv[2], argv[3:]
    rules, programs, only = read_rules(rules_path)
    targets, binaries = {}, {}
    for spec in specs:
        name, _, files = spec.partition("=")
        if name.startswith("program:"):
            binaries[name[len("program:"):]] = files
        else:
            targets[name] = [f for f in files.split(",") if f]
    failures = []
    layer = layers_of(targets, rules)
    for name in sorted(set(targets) - set(layer)):
        failures.append(f"{name} is not in {rules_path}: give it its layer")
    for name in sorted(n for n in rules if not fnmatch.filter(targets, n)):
        failures.append(f"{rules_path} names {name}, which is no target of the build")

    owner, uses = {}, {}
    for name, files in sorted(targets.items()):
        defined = nm(nm_cmd, files, "--defined-only")
        used = nm(nm_cmd, files, "--undefined-only")
        by_symbol = {s: m for m, s in defined}
        for s in by_symbol:
            owner[s] = name
        edges = defaultdict(set)
        for m, _ in defined:
            edges[m]
        for m, s in used:
            if s in by_symbol and by_symbol[s] != m:
                edges[m].add(by_symbol[s])
        loop = find_loop(edges)
        if loop:
            failures.append(f"the files of {name} call one another in a loop:\n" +
                            "\n".join(f"  {m}" for m in loop))
        else:
            print(f"layers: {name} has no cycle; bottom to top: "
                  + " ".join(bottom_to_top(edges, edges)))
        uses[name] = used

    for name, used in sorted(uses.items()):
        for _, s in sorted(used):
            d = owner.get(s)
            if d and d != name and name in layer and d in layer and layer[d] >= layer[name]:
                failures.append(f"{name} uses {d} ({s}), which is not below it")

    for prefixes, allowed in only:
        for name, used in sorted(uses.items()):
            calls = sorted({s for _, s in used if s.startswith(prefixes) and s not in owner})
            if calls and not any(fnmatch.fnmatchcase(name, a) for a in allowed):
                failures.append(f"{name} calls {calls[0]}, which only {' '.join(allowed)} may")

    for prog in sorted(set(binaries) - set(programs)):
        failures.append(f"program {prog} is not in {rules_path}: say what it may hold")
    for prog, allowed in sorted(programs.items()):
        if prog not in binaries:
            failures.append(f"{rules_path} names program {prog}, which was not given")
            continue
        top = max(layers_of(allowed, rules).values(), default=-1)
        held = {owner[s] for _, s in nm(nm_cmd, [binaries[prog]], "--defined-only")
                if s in owner and s != "main"}  # each program has its own main
        for t in sorted(held):
            if layer.get(t, -1) > top:
                failures.append(f"program {prog} holds {t}, above {' '.join(allowed)}")
        print(f"layers: {prog} holds {' '.join(sorted(held))}")

    for f in dict.fromkeys(failures):
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
