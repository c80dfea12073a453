"""The local stage: the container layout (layout), the node processes (local), the guard."""
