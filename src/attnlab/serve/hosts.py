"""The names a server answers to. A page on any site can point its own name at this machine's
address (DNS rebinding) and then read the answers as its own; its requests still carry its name
in the Host header. So a request is answered only when Host names this machine as it was meant
to be reached: a loopback name, the address the server is bound to, or a name allowed with
--allowed-host (any port); anything else is a 400 before the app sees it.

    app.add_middleware(HostCheck, names=allowed_names("0.0.0.0", ["explorer.lab"]))
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from attnlab.errors import ConfigError

from .problems import quoted

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
# A Host header: a name or an IPv4 address, or an IPv6 address in brackets; then a port or not.
_HOST = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::[0-9]{1,5})?")


def host_name(value: str) -> str | None:
    """The name in a Host header (lowercase, without port or trailing dot); None if it is not
    one."""
    found = _HOST.fullmatch(value.strip().lower())
    return found["name"].rstrip(".") if found else None


def allowed_names(bound: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The loopback names, the address `bound` (unless it means every interface) and `extra`
    (names or addresses, an IPv6 address with or without brackets), each once."""
    names = list(LOOPBACK_NAMES)
    bound_name = _as_name(bound)  # (a --host that is none: binding it says so)
    if bound_name is not None and bound_name not in ("0.0.0.0", "[::]"):
        names.append(bound_name)
    for value in extra:
        name = _as_name(value)
        if name is None:
            raise ConfigError(
                f"--allowed-host {value}: give a host name or an IP address (without a port)"
            )
        names.append(name)
    return tuple(dict.fromkeys(names))


def _as_name(value: str) -> str | None:
    try:
        address = ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        name = host_name(value)
        return None if name is None or ":" in value else name
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


class HostCheck:
    """ASGI middleware: 400 with a one-sentence detail for a request whose Host header is not
    one of `names` (or is missing)."""

    def __init__(self, app: ASGIApp, names: Iterable[str]):
        self.app, self.names = app, tuple(names)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        header = Headers(scope=scope).get("host")
        if header is not None and host_name(header) in self.names:
            return await self.app(scope, receive, send)
        named = "no Host header" if header is None else f"the Host header {quoted(header)}"
        detail = (
            f"the request has {named}, and this server answers only to "
            f"{', '.join(self.names)} (attnlab serve --allowed-host adds names)"
        )
        await JSONResponse({"detail": detail}, 400)(scope, receive, send)
