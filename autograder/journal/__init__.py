"""The journal ``watch`` keeps (``log``: one JSON line per event, appended and synced) and what the
report ``grade`` writes reads from it (``summary``). A leaf: it imports nothing else of this package."""
