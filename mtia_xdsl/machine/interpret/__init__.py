"""Functional semantics of the ops the machine model runs (xDSL interpreter functions), one module per
dialect or concept; `values.py` states the conventions they share."""
