"""The stage functions, one module per group of stages (question, search, prompt, answer);
`pipeline/table.py` lists them in run order. Each is thin: it reads the state, calls the logic
of its stage's own package and records the result (`step.done`)."""
