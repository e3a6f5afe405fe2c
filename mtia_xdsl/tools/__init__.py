"""Command-line tools: mtia-opt (passes and targets) and mtia-run (the machine model)."""
