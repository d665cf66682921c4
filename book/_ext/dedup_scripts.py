"""Sphinx extension: drop repeated inline <script> blocks from every page.

Under Jupyter Book 1.x with Sphinx 7.4, sphinx-thebe and sphinx-togglebutton register their inline
configuration scripts twice, and the second ``const THEBE_JS_URL = ...`` is a script error in the browser
(``Identifier 'THEBE_JS_URL' has already been declared``). Sphinx removes duplicate script *files* but not
duplicate inline bodies; this does, keeping the first of each.
"""


def _dedup(app, pagename, templatename, context, doctree):
    seen, kept = set(), []
    for script in context.get("script_files", []):
        attrs = getattr(script, "attributes", {})
        key = (getattr(script, "filename", None) or "", tuple(sorted(attrs.items())))  # None and "": both inline
        if key not in seen:
            seen.add(key)
            kept.append(script)
    context["script_files"] = kept


def setup(app):
    app.connect("html-page-context", _dedup, priority=100)  # early: a handler that returns a template stops the event
    return {"parallel_read_safe": True, "parallel_write_safe": True}
