"""Sphinx with MyST: the pages are CommonMark, as GitHub shows them (docs/development/docs.md says why).

Build: .venv/bin/python -m sphinx -W --keep-going -b html docs docs/_build/html (tests/house/test_docs.py
builds it with warnings as errors). The generated tables are refreshed by scripts/gen_docs.py.
"""
project = "attention-course"
author = "attention-course"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# docs/notes/: the engineers' notes, one per branch, until the lead folds them into these pages; _data: the
# words of the generated tables (TOML, read by scripts/gen_docs.py).
exclude_patterns = ["_build", "_data", "notes", "notes/**", "**/.ipynb_checkpoints"]
myst_heading_anchors = 3            # [text](page.md#a-heading) links are checked like page links
highlight_language = "none"         # a fence without a language (shell lines, outputs) is shown as written
html_theme = "alabaster"
html_theme_options = {"page_width": "1200px", "sidebar_width": "260px"}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_show_sourcelink = False
