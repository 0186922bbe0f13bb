"""Extraction and score: the answer read from the final content, and the one verdict on it.

verdict     decide(): the one verdict a live run, `rescore` and `score` reach from what a record keeps
extract/    the extraction ladder and its rungs
rules       the scorers of an extracted value (SCORERS, by a task's `scorer.kind`)
forms       one written form of an answer and its aliases: dates, numbers, amounts, "&"
whole       the scorers of the whole content (WHOLE_SCORERS: code, ifeval; code + sandbox, ifeval modules), and
            the refusal of a task whose whole-answer scorer is given a typed answer (check_scorers)
constrain   structured-output constraints from an answer spec, sent as an endpoint accepts them
followup    the follow-up: an extraction step, held against what the content states
modeljudge  ModelJudge: a model asked about free-form answers the rules rejected
"""
