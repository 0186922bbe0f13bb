"""Extraction and score: the answer read from the final content, and the one verdict on it.

verdict     decide(): the one verdict a live run, `rescore` and `score` reach from what a record keeps
extract/    the extraction ladder and its rungs
rules       the scorers of an extracted value (SCORERS, by a task's `scorer.kind`)
aliases     alias_match: a free-form answer against the accepted ones, rejected only on evidence in the answer
retract     the names a free-form answer rejects ("rather than") or takes back ("No wait — ...")
forms       one written form of an answer and its aliases: dates, numbers, amounts, "&"
whole       the scorers of the whole content (WHOLE_SCORERS: code, ifeval; code + sandbox, ifeval modules), and
            the refusal of a task whose whole-answer scorer is given a typed answer (check_scorers)
constrain   structured-output constraints from an answer spec, sent as an endpoint accepts them
toolcheck   check_calls: a response's tool calls against the expected ones, by BFCL's rules (tasks.toolvalues: one
            call against one acceptable call); toolschema: schema_problem, JSON Schema validity apart
followup    the follow-up: an extraction step, held against what the content states
modeljudge  ModelJudge: a model asked about free-form answers the rules rejected
episode     judge_episode: a multi-turn episode by BFCL's rules (state and execution results per turn)
"""

from qualeval.scoring.code import REFUSAL
from qualeval.scoring.constrain import FIRST_TOKEN, Constraint, constraint_for, request_params
from qualeval.scoring.episode import judge_episode
from qualeval.scoring.followup import followup_prompt
from qualeval.scoring.modeljudge import ModelJudge, model_judge_for
from qualeval.scoring.rules import constraint_cuts, gold_is_number
from qualeval.scoring.toolcheck import CallCheck, call_arguments, check_calls
from qualeval.scoring.toolschema import schema_problem
from qualeval.scoring.toolverdict import wire_status
from qualeval.scoring.verdict import Verdict, decide, echoed, wants_model_judge
from qualeval.scoring.whole import WHOLE_ANSWER, check_scorers, runs_code

__all__ = [
    "FIRST_TOKEN",
    "REFUSAL",
    "WHOLE_ANSWER",
    "CallCheck",
    "Constraint",
    "ModelJudge",
    "Verdict",
    "call_arguments",
    "check_calls",
    "check_scorers",
    "constraint_cuts",
    "constraint_for",
    "decide",
    "echoed",
    "followup_prompt",
    "gold_is_number",
    "judge_episode",
    "model_judge_for",
    "request_params",
    "runs_code",
    "schema_problem",
    "wants_model_judge",
    "wire_status",
]
