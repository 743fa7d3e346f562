"""End to end: one study at --smoke through analysis/loomdist-study, then its page checked
against its kept data (not the numbers): the page says it is generated and by which
command; every claim of the study has one verdict row, and each row's verdict is the one
the rules give on the kept data; each arm's results table has a row per strategy it ran;
the README block made from the page lists the same verdicts; and --from rebuilds the
page byte for byte.

Usage: check_study.py ROOT BUILD_DIR WORK_DIR STUDY
"""
import json
import os
import shutil
import subprocess
import sys

from analysis import claims, study_arms, study_page


def fail(message):
    print(f"check_study: {message}", file=sys.stderr)
    sys.exit(1)


def run(root, *args):
    cmd = [os.path.join(root, "analysis", "loomdist-study"), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc


def main(root, build, work, study):
    shutil.rmtree(work, ignore_errors=True)
    pages, again, results = (os.path.join(work, d) for d in ("pages", "again", "results"))
    run(root, study, "--smoke", "--build", build, "--out", pages, "--results", results)
    [day] = os.listdir(results)
    data_dir = os.path.join(results, day, study)
    with open(os.path.join(data_dir, "sitting.json")) as f:
        sitting = json.load(f)
    study_arms.served(sitting["arms"])
    with open(os.path.join(pages, f"{study}.md")) as f:
        page = f.read()

    if study_page.MARK not in page or f"analysis/loomdist-study {study} --smoke" not in page:
        fail("the page does not say it is generated, or by which command")
    for part in ("## Method", "## Setup", "## Results", "## Verdicts"):
        if part not in page:
            fail(f"no {part} section")
    if not os.path.exists(os.path.join(pages, "figures", f"{study}.png")):
        fail("no figure")

    reg = claims.load()
    expected = {j.claim["id"]: j.verdict.verdict
                for j in claims.judge_all(reg, study, sitting["arms"], sitting["context"])}
    rows = study_page.verdict_rows(page)
    if sorted(i for i, _ in rows) != sorted(expected):
        fail(f"verdict rows {sorted(i for i, _ in rows)} against claims {sorted(expected)}")
    for claim_id, verdict in rows:
        if expected[claim_id] != verdict:
            fail(f"{claim_id}: page says {verdict}, the data gives {expected[claim_id]}")

    for arm, data in sitting["arms"].items():
        if f"**Arm `{arm}`**" not in page:
            fail(f"no results table for arm {arm}")
        section = page.split(f"**Arm `{arm}`**", 1)[1].split("**Arm", 1)[0]
        for strategy in data["strategies"]:
            if f"\n| {strategy} |" not in section:
                fail(f"arm {arm}: no row for {strategy}")
    for row in reg["studies"][study]["setup"]:
        if f"| {row['parameter']} |" not in page:
            fail(f"no setup row for {row['parameter']}")

    block = study_page.readme_block(pages, work).splitlines()
    row = next((r for r in block if f"({study}.md)" in r.replace("pages/", "")), None)
    if row is None:
        fail("the README block has no row for the page")
    cells = [c.strip() for c in row.strip("|").split("|")[2:]]
    for verdict, cell in zip(("confirmed", "refuted", "no difference", "inconclusive",
                              "not applicable"), cells):
        ids = sorted(i for i, v in rows if v == verdict)
        if sorted(i for i in cell.split(", ") if i != "-") != ids:
            fail(f"README block, {verdict}: {cell!r} against the page's {ids}")

    run(root, study, "--from", data_dir, "--out", again)
    with open(os.path.join(again, f"{study}.md")) as f:
        if f.read() != page:
            fail("--from did not rebuild the page byte for byte")
    print(f"check_study: {study}: {len(rows)} verdict rows agree with the data; "
          f"--from rebuilds the page")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        fail("usage: check_study.py ROOT BUILD_DIR WORK_DIR STUDY")
    main(*sys.argv[1:])
