"""`phoenix serve` with its OTLP/gRPC receiver bound to PHOENIX_HOST as well.

Phoenix binds its UI and OTLP/HTTP to PHOENIX_HOST but its gRPC receiver to every interface
([::]) whatever the setting; the one place it names that address is patched here, so the whole
server is reachable only where PHOENIX_HOST says (scripts/phoenix.sh sets 127.0.0.1).
"""
import os
import sys

from grpc.aio import _server as aio_server

host = os.environ.get("PHOENIX_HOST", "127.0.0.1")
bind = f"[{host}]" if ":" in host and not host.startswith("[") else host
server_class = aio_server.Server
original = server_class.add_insecure_port
secure = server_class.add_secure_port


def _local(address: str) -> str:
    return bind + address[len("[::]"):] if address.startswith("[::]:") else address


server_class.add_insecure_port = lambda self, address: original(self, _local(address))
server_class.add_secure_port = lambda self, address, credentials: secure(self, _local(address), credentials)

from phoenix.server.main import main  # noqa: E402  (after the patch, which it must see)

if __name__ == "__main__":
    sys.argv[0] = "phoenix"
    sys.exit(main())
