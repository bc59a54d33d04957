#!/usr/bin/python3
"""Tarpit for scanwarden's test lab: accepts TCP connections on ADDR:PORT...
and never sends a byte. Whatever a client sends is read and dropped, a client
that hangs up is forgotten, and at most MAX connections are held (the oldest is
closed to make room), so it cannot grow without bound.

usage: tarpit.py ADDR PORT [PORT...]
"""
import collections
import selectors
import socket
import sys

MAX = 64


def main():
    addr, ports = sys.argv[1], [int(p) for p in sys.argv[2:]]
    sel = selectors.DefaultSelector()
    for port in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port))
        s.listen(128)
        sel.register(s, selectors.EVENT_READ, "listen")
    held = collections.OrderedDict()
    while True:
        for key, _ in sel.select():
            sock = key.fileobj
            if key.data == "listen":
                conn, _ = sock.accept()
                held[conn] = None
                sel.register(conn, selectors.EVENT_READ, "conn")
                if len(held) > MAX:
                    old, _ = held.popitem(last=False)
                    sel.unregister(old)
                    old.close()
                continue
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(sock)
                held.pop(sock, None)
                sock.close()


if __name__ == "__main__":
    main()
