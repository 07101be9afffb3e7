"""The wire protocol: one JSON request per line on the Unix socket, answered in order."""

import json
import os
import socket
import sys

from envgen_warm import runs
from envgen_warm.caches import _install_code_cache, _install_rewrite_cache, _install_statement_cache, _preload
from envgen_warm.checkpoints import _collect, _run_collected, _stop_checkpoints
from envgen_warm.runs import _high_socket, _kill_others, _run, _scratch_cleanup
from envgen_warm.startup import _note_startup


_LINE_LIMIT = 1 << 20


def main():
    import envgen_pytest

    # Forked runs end through runs._exit_run, after writing what they analysed.
    envgen_pytest.EXIT_AT_UNCONFIGURE = False
    root = os.path.realpath(os.getcwd())
    path = sys.argv[1]
    runs._OWN_PID_NAMESPACE = "--own-pid-namespace" in sys.argv[2:]
    _note_startup(root)
    _install_rewrite_cache()
    _install_code_cache()
    _install_statement_cache()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(1)
    os.rename(path + ".tmp", path)
    connection, _ = listener.accept()
    listener.close()
    connection = _high_socket(connection)
    reader = connection.makefile("rb")
    for line in reader:
        if len(line) > _LINE_LIMIT:
            break
        request = json.loads(line)
        op = request.get("op")
        if op == "run":
            answer, declined = _run_collected(request) if request.get("precollected") else (None, None)
            if answer is not None:
                answer["precollected"] = True
                _kill_others()
            elif (request.get("precollected") or {}).get("scratch") is False:
                # A file pytest imported when this server started: a run from scratch here
                # would inherit it unchanged. Only a fresh interpreter runs it as it is now.
                answer = {"fresh": True, "declined": declined, "precollected": False}
            else:
                answer = _run(request, root)
                answer["precollected"] = False
                if declined:
                    answer["declined"] = declined
            _scratch_cleanup()
        elif op == "collect":
            answer = _collect(request, root, connection)
        elif op == "preload":
            answer = _preload(request, root)
        else:
            break
        answer["id"] = request.get("id")
        connection.sendall((json.dumps(answer) + "\n").encode("utf-8"))
    _stop_checkpoints()
    connection.close()
