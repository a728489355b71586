"""Sphinx configuration: ``python -m sphinx -W docs docs/_build/html`` (the ``docs`` extra).

The example notebooks are rendered from the outputs stored in ``notebooks/*.ipynb`` (never
executed here); they are copied into ``docs/examples/`` because Sphinx reads only its source
folder.
"""

import shutil
from pathlib import Path

import bayesmv

DOCS = Path(__file__).resolve().parent
NOTEBOOKS = DOCS.parent / "notebooks"
EXAMPLES = DOCS / "examples"


def copy_notebooks():
    """Copy every stored notebook whose copy in ``docs/examples/`` is missing or differs."""
    EXAMPLES.mkdir(exist_ok=True)
    for notebook in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        target = EXAMPLES / notebook.name
        if not target.exists() or target.read_bytes() != notebook.read_bytes():
            shutil.copyfile(notebook, target)


copy_notebooks()

project = "bayesmv"
author = "the bayesmv developers"
copyright = "2026, the bayesmv developers"
release = version = bayesmv.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_nb",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

# Notebooks: the stored outputs, as committed (CI does not run them; the test suite does, quick).
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# API reference: every name in a documented module's ``__all__``. Under ``-W`` a documented object
# fails the build without a docstring (numpydoc GL08), with a parameter not documented, documented
# but absent, without a type or a description (PR01, PR02, PR04, PR07), or without Returns (RT01).
autodoc_default_options = {"members": True, "undoc-members": True, "member-order": "bysource"}
autodoc_typehints = "none"
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "PR04", "PR07", "RT01"}
numpydoc_validation_exclude = {r"\.__init__$", r"\.__call__$"}

html_theme = "pydata_sphinx_theme"
html_title = f"bayesmv {release}"
html_theme_options = {"navigation_with_keys": False}


def skip_metadata_request_methods(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods (documented by scikit-learn)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", skip_metadata_request_methods)
