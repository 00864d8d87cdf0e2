"""Loading a model directory and summarising with it (issue 25's room; safe_pickle so far)."""
