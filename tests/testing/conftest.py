"""The plugin's tests run pytest in this process (pytester), which drops every module the
inner run imported when it ends.

orjson, which the sandbox imports, keeps borrowed pointers to types of modules it imports
(``uuid``, ``enum``, ``dataclasses``...): once those modules are dropped and collected, a
later garbage collection follows a freed pointer and the interpreter crashes (exit 139).
Importing the sandbox here, before any inner run, keeps all of them in the snapshot that
pytester restores. Customers do not drop modules, so the package itself is unaffected.
"""

import sports_posts.sandbox.app  # noqa: F401
