"""Refuse every network connection in this Python process, loudly.

Self-contained (standard library only) so that a test can copy it as ``sitecustomize.py`` into a
folder on PYTHONPATH: Python then imports it at start-up, before the program's own code, in the
process and in every Python process it starts. Internet sockets (IPv4, IPv6), name look-ups
and ``socket.create_connection`` raise ``NetworkUsed``; each attempt is also appended, with
its stack, to the file named by ``ATTENTION_LAB_NETWORK_LOG``, so an attempt the program
catches and shrugs off is still seen. Local sockets (AF_UNIX, socketpair) stay allowed.
"""

from __future__ import annotations

import os
import socket
import sys
import traceback

LOG = "ATTENTION_LAB_NETWORK_LOG"
INTERNET = {socket.AF_INET, socket.AF_INET6, -1}  # -1: the default family, AF_INET


class NetworkUsed(OSError):
    """Something tried to reach the network."""


def refuse(what: str):
    message = f"network use refused: {what}"
    where = os.environ.get(LOG)
    if where:
        with open(where, "a", encoding="utf-8") as log:
            log.write(f"{message}\n{''.join(traceback.format_stack(limit=15))}\n")
    print(message, file=sys.stderr)
    raise NetworkUsed(message)


class GuardedSocket(socket.socket):
    def __init__(self, family=-1, type=-1, proto=-1, fileno=None):
        if fileno is None and family in INTERNET:
            refuse(f"socket.socket(family={family!r})")
        super().__init__(family, type, proto, fileno)


def install() -> None:
    """Replace socket creation, name look-ups and create_connection with refusals."""
    socket.socket = GuardedSocket
    socket.create_connection = lambda address, *a, **k: refuse(f"socket.create_connection({address!r})")
    socket.getaddrinfo = lambda host, *a, **k: refuse(f"socket.getaddrinfo({host!r})")
    socket.gethostbyname = lambda host: refuse(f"socket.gethostbyname({host!r})")


install()
