"""The evaluation layer: running strategies over tasks and storing what they did (results)."""
