"""List what moved against the real-output verdict snapshots, or rewrite them (run from the project root).

    python -m tests.real_outputs                      every item that moved, corpus by corpus (exit 1 if any)
    python -m tests.real_outputs bbh/navigate         only the corpora named (gsm/, math/, mmlu_pro/, bbh/...)
    python -m tests.real_outputs --write [CORPUS...]  rewrite those snapshots (all when none is named)

Rewrite a snapshot only after reading every item the listing shows and finding each one right; commit the
snapshot with the change that moved it (docs/development.md, "The real-output gate").
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor

from tests.real_outputs import snapshot
from tests.real_outputs.corpora import CORPORA, Verdict, scored


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.real_outputs", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpora", nargs="*", metavar="CORPUS", help=f"any of: {', '.join(CORPORA)}")
    parser.add_argument("--write", action="store_true", help="rewrite the snapshots instead of listing")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="corpora scored at once")
    args = parser.parse_args()
    unknown = [key for key in args.corpora if key not in CORPORA]
    if unknown:
        parser.error(f"no corpus {', '.join(unknown)}; the corpora are {', '.join(CORPORA)}")
    keys = args.corpora or list(CORPORA)
    missing = [str(CORPORA[key].source) for key in keys if not CORPORA[key].source.exists()]
    if missing:
        parser.error(f"missing: {', '.join(missing)} (the corpora are read from ../shared/data/model_outputs)")
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results: dict[str, tuple[Verdict, ...]] = dict(zip(keys, pool.map(scored, keys), strict=True))
    moved_any = False
    for key, verdicts in results.items():
        corpus = CORPORA[key]
        before = snapshot.read(corpus)
        lines = snapshot.moved(corpus, before or [], verdicts)
        if args.write:
            snapshot.write(corpus, verdicts)
            change = "new" if before is None else f"{len(lines)} moved"
            print(f"{key}: wrote {len(verdicts)} items ({change}) to {corpus.snapshot}")
        elif lines:
            moved_any = True
            print(snapshot.summary(corpus, lines, before or [], verdicts) + "\n")
        else:
            print(f"{key}: {len(verdicts)} items, none moved")
    return 1 if moved_any else 0


if __name__ == "__main__":
    sys.exit(main())
