"""Answer extraction: read the final answer from the final content only, never from the reasoning.

The ladder, first rung that yields a value of the answer's type wins:
  json     the answer field of a JSON object anywhere in the content, fenced or not, repaired when broken
  anchor   an answer marker: `#### N`, `Answer: X`, `\\boxed{X}`, "the answer is X", `"answer": "X"`; the LAST
           marker whose span holds a value, because models restate and correct themselves; a span runs to the
           end of its sentence
  math     for math-scored tasks, what math-verify parses out of the whole content
  last     a line that is only an option marker; else the last number, option or yes/no of the last line, or
           the last line itself for text
A held structured-output constraint gives the `constraint` rung before all of these (qualeval.scoring.verdict).
Before any rung, text that repeats the prompt (a run of eight or more of its words: the instruction, the options,
the examples) is masked (echo): it is the prompt's, not the model's answer.
The published GSM8K 3/10 came from reading numbers off the reasoning trace; nothing here looks at it.
"""

from qualeval.scoring.extract.ladder import Extraction, Rung, echoes, extract, naive_extract, typed_value
from qualeval.scoring.extract.maths import math_equal, math_parse, math_timeout
from qualeval.scoring.extract.normalize import normalize, token_f1
from qualeval.scoring.extract.numbers import find_number, words_to_digits

__all__ = [
    "Extraction",
    "Rung",
    "echoes",
    "extract",
    "find_number",
    "math_equal",
    "math_parse",
    "math_timeout",
    "naive_extract",
    "normalize",
    "token_f1",
    "typed_value",
    "words_to_digits",
]
