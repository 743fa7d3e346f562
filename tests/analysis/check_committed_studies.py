"""The committed study pages and the README's table of them: each page in docs/studies/
is rebuilt byte for byte from its kept data (loomdist-study --from), and the README's
table is the one the pages give, so no verdict in either is typed by hand. Regenerate
the table with `analysis/loomdist-study readme`.

Usage: check_committed_studies.py ROOT WORK_DIR
"""
import glob
import os
import re
import sys

from analysis import study, study_page


def fail(message):
    print(f"check_committed_studies: {message}", file=sys.stderr)
    sys.exit(1)


def main(root, work):
    pages = sorted(glob.glob(os.path.join(root, "docs", "studies", "*.md")))
    for page in pages:
        with open(page) as f:
            text = f.read()
        made = re.search(r"data in `([^`]*)`", text)
        if study_page.MARK not in text or not made:
            fail(f"{page} is not a generated page")
        name = os.path.basename(page)[:-3]
        again = study.write_page(name, os.path.join(root, made.group(1)), work)
        with open(again) as f:
            if f.read() != text:
                fail(f"{page} is not what --from {made.group(1)} gives")
    readme = os.path.join(root, "README.md")
    with open(readme) as f:
        text = f.read()
    if study_page.BEGIN not in text or study_page.END not in text:
        fail(f"{readme} has no studies block")
    have = text.split(study_page.BEGIN, 1)[1].split(study_page.END, 1)[0]
    want = study_page.readme_block(os.path.join(root, "docs", "studies"), root)
    if have != want.split(study_page.BEGIN, 1)[1].split(study_page.END, 1)[0]:
        fail("the README's studies table differs from the pages'; run "
             "analysis/loomdist-study readme")
    print(f"check_committed_studies: {len(pages)} pages rebuilt byte for byte; the "
          "README's table is theirs")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: check_committed_studies.py ROOT WORK_DIR")
    main(*sys.argv[1:])
