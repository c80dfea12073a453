"""The facts of a file that the migration rules decide on, recorded by one pass over its tree.

``FileFacts`` (``file_facts``) is the pass; the records it fills are in ``records``.
"""

from majob.migrate.facts.file_facts import FileFacts

__all__ = ["FileFacts"]
