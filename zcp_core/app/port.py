"""Whether the app's port is free, checked before Streamlit starts (``zcp app``, ``zcp app --check-port``, the demo).

Streamlit alone says only "Port 8611 is not available" and stops; this check says how to pick another port, and
the demo asks it before it announces the app, so a taken port is reported before anything claims to open.
"""

from __future__ import annotations

import errno
import socket

#: The port the hint suggests when no free one is found near the one asked for.
FALLBACK_PORT = 8600


def _bind_error(host: str, port: int) -> OSError | None:
    """The error binding ``host:port`` gives now, or None when it binds."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        return OSError(errno.EADDRNOTAVAIL, str(e.strerror or e))
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as s:
        # Streamlit's server (tornado) sets SO_REUSEADDR too, so a port still in TIME_WAIT after a previous app
        # counts as free here exactly when it is free for the app.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(address)
        except OSError as e:
            return e
    return None


def free_port_near(host: str, port: int, tries: int = 50) -> int:
    """The first free port after ``port`` (the hint's suggestion), else :data:`FALLBACK_PORT`."""
    for candidate in range(port + 1, min(port + 1 + tries, 65536)):
        if _bind_error(host, candidate) is None:
            return candidate
    return FALLBACK_PORT


def port_problem(host: str, port: int) -> str | None:
    """Why the app cannot listen on ``host:port``, as one line that says what to do; None when it can."""
    err = _bind_error(host, port)
    if err is None:
        return None
    if err.errno == errno.EADDRINUSE:
        other = free_port_near(host, port)
        return (f"port {port} on {host} is in use (another zcp app or demo?): pick another with "
                f"`ZCP_PORT={other} make demo` or `zcp app --port {other}`")
    if err.errno == errno.EACCES:
        return (f"port {port} on {host} needs administrator rights: pick one above 1023 with "
                f"`ZCP_PORT={FALLBACK_PORT} make demo` or `zcp app --port {FALLBACK_PORT}`")
    if err.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on {host}: not an address of this machine (--host 127.0.0.1 is this machine only)"
    return f"cannot listen on {host}:{port}: {err.strerror or err}"
