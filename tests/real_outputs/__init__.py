"""The regression gate on real model outputs: every corpus in ../shared/data/model_outputs scored through
`qualeval score`'s own code, held item by item against a committed snapshot and per corpus against the figures
and verdicts its authors published; and the real llama-server captures through the client's split.

corpora     which corpora there are, how each is scored (task YAMLs in tests/data/real_outputs/)
references  the authors' own extraction, reimplemented, and their published figures
snapshot    the committed per-item verdicts, the moved-item listing, and the command that rewrites them
"""
