import os

from envgen_warm.startup import _watch_start

# Before pytest is imported: it may import the project itself (see envgen_warm.startup).
_watch_start(os.path.realpath(os.getcwd()))

from envgen_warm.server import main  # noqa: E402

main()
