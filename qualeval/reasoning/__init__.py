"""The split: the model's thinking apart from its final answer, whatever field or inline format it came in."""
