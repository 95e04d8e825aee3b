"""CPU of one whole child process, start-up and exit included: run it, wait for it with os.wait4.

Usage: python3 bench/rusage.py CMD [ARGS...]. The child inherits stdin/stdout/stderr; when it has
exited, one JSON line goes to file descriptor 3 if open (else to stderr):
{"user_s", "sys_s", "wall_s", "maxrss_kib", "status"}. Exits with the child's exit code.
Used by bench/startup.ts and bench/client-yardstick.ts (no /usr/bin/time needed).
"""

import json
import os
import sys
import time


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: python3 bench/rusage.py CMD [ARGS...]", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    out = {
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "wall_s": time.perf_counter() - t0,
        "maxrss_kib": ru.ru_maxrss,
        "status": code,
    }
    line = json.dumps(out) + "\n"
    try:
        os.write(3, line.encode())
    except OSError:
        sys.stderr.write(line)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
