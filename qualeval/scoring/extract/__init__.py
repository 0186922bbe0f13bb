"""Answer extraction: read the final answer from the final content only, never from the reasoning.

The ladder, first rung that yields a value of the answer's type wins:
  json     the answer field of a JSON object anywhere in the content, fenced or not, repaired when broken; an object
           of working alone that ends the content (cut off before its answer field, or closed without one) holds
           working: nothing in it is read. A bare value (`42`) is no JSON: the last rung reads it
  anchor   an answer marker: `#### N`, `Answer: X`, `\\boxed{X}`, "the answer is X", `"answer": "X"`; the last
           marker whose span holds a value (the first, for `pick: first`), because models restate and correct
           themselves; a span runs to the end of its sentence. A marker states no value where it holds a
           placeholder (`Answer: <answer>`), nothing, or a judgement ("this answer is not correct because ...");
           a conditional ("would be") or a value before "is the answer" yields to a plain marker after it; a
           correction right after the value wins ("12... no wait, 7", "12? No, 7."), and a value asked about or
           denied is no answer unless what follows says what it is (qualeval.scoring.extract.anchors)
  math     for math-scored tasks, what math-verify parses out of the whole content
  last     a line that is only an option marker; else an option a closing statement names ("So C."), the last
           number, option or yes/no of the last line (what it says last after a question or a retraction: "Yes?
           No."), or the last line itself for text; nothing from a line that loops or whose answer marker states
           no value
A held structured-output constraint gives the `constraint` rung before all of these, and a follow-up's answer the
content holds the `followup` rung after them (qualeval.scoring.verdict).
Before any rung, text that repeats the prompt (a run of eight or more of its words: the instruction, the options,
the examples) is masked (echo); an option of the item quoted, and a closing sentence in an example's words after
working of the model's own, are the model's and stay (qualeval.scoring.extract.echo). `echoes` says whether the
content is an echo: mostly the prompt's text, cut off or with no answer of its own, or the prompt's text with no
more than a fragment of the model's own beside it that states no answer.
A response the budget cut off is read less the number it ends on, which may be cut short (cutoff: "... is 12" where
the next token was "5"); the verdict drops it before the ladder reads.
The published GSM8K 3/10 came from reading numbers off the reasoning trace; nothing here looks at it.
"""

from qualeval.scoring.extract.cutoff import unfinished_dropped
from qualeval.scoring.extract.ladder import Extraction, Rung, echoes, extract, naive_extract, typed_value
from qualeval.scoring.extract.maths import math_equal, math_parse, math_timeout
from qualeval.scoring.extract.normalize import normalize, token_f1
from qualeval.scoring.extract.numbers import Number, find_number, fmt_number, words_to_digits

__all__ = [
    "Extraction",
    "Number",
    "Rung",
    "echoes",
    "extract",
    "find_number",
    "fmt_number",
    "math_equal",
    "math_parse",
    "math_timeout",
    "naive_extract",
    "normalize",
    "token_f1",
    "typed_value",
    "unfinished_dropped",
    "words_to_digits",
]
