"""Opening the server's socket before anything says it serves: the port is bound first (a
port in use, an address this machine lacks: one sentence, no server), then announced, then
handed to uvicorn. And the one warning line for a socket reachable from other machines.

    sock = bind("127.0.0.1", 8000)
    serve(create_app(runs), sock)
"""

from __future__ import annotations

import errno
import ipaddress
import socket

from attnlab.errors import ConfigError

BACKLOG = 2048  # uvicorn's default: connections queued while the worker is busy


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: one the system picks); a ConfigError in one
    sentence when it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError):
        raise ConfigError(
            f"--host {host}: not an address of this machine or a name it resolves"
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        # as uvicorn does: a restart may reuse the port of connections still closing; a port
        # another program listens on stays refused
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as error:
        sock.close()
        raise ConfigError(_why(error, host, port)) from None
    return sock


def _why(error: OSError, host: str, port: int) -> str:
    if error.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is in use by another program; stop it or choose another --port"
        )
    if error.errno == errno.EADDRNOTAVAIL:
        return f"--host {host}: no network interface of this machine has that address"
    if error.errno == errno.EACCES:
        return (
            f"port {port} is reserved for privileged programs on this machine; choose a "
            f"--port from 1024 up"
        )
    return f"cannot listen on {host} port {port}: {(error.strerror or str(error)).lower()}"


def url(sock: socket.socket) -> str:
    """http://HOST:PORT/ of a bound socket (an IPv6 address in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def exposure_warning(sock: socket.socket, names: tuple[str, ...]) -> str | None:
    """One line for a socket other machines can reach (None on loopback): the server has no
    authentication, who can reach it, and which Host names it answers to."""
    host, port = sock.getsockname()[:2]
    address = ipaddress.ip_address(host.partition("%")[0])
    if address.is_loopback:
        return None
    where = (
        "on every network interface of this machine"
        if address.is_unspecified
        else f"on {host}, an address other machines can reach"
    )
    return (
        f"attnlab serve: warning: listening {where}, without authentication: anyone who can "
        f"connect to port {port} can use these models; requests are answered only when "
        f"their Host is {', '.join(names)} (add names with --allowed-host)"
    )


def serve(app, sock: socket.socket) -> None:
    """Run the app on the bound socket until interrupted (uvicorn, one process, the app's own
    request log)."""
    import uvicorn

    config = uvicorn.Config(app, access_log=False, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
