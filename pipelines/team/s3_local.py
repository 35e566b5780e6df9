"""A local S3-compatible server on 127.0.0.1: moto's server mode (`moto[server]`, the dev extra).

For the tests and `make team-demo` of the shared warehouse and the s3:// snapshot store, where
no object store exists: a real S3 HTTP endpoint (signed requests, buckets, multipart uploads),
in memory, stopped with `stop()` or when this process ends. `env()` gives the standard AWS
variables (dummy credentials, the endpoint) that the s3:// store and the DuckLake warehouse read.
"""

from __future__ import annotations

import logging
import urllib.request
from dataclasses import dataclass, field
from typing import Any

ACCESS_KEY = "benchpress-local"  # moto accepts any credentials; these mark them as local
SECRET_KEY = "benchpress-local-secret"


class S3Unavailable(RuntimeError):
    """moto is not installed or its server did not start."""


@dataclass
class LocalS3:
    host: str = "127.0.0.1"
    port: int = 0  # 0: a free port
    _server: Any = field(default=None, init=False, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> LocalS3:
        try:
            from moto.server import ThreadedMotoServer  # deferred: dev extra only, optional
        except ImportError:
            raise S3Unavailable(
                "moto's S3 server is not installed; install the dev extra: "
                "pip install -c constraints.txt -e '.[pipeline,dev]'"
            ) from None
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
        self._server = ThreadedMotoServer(ip_address=self.host, port=self.port, verbose=False)
        self._server.start()
        self.host, self.port = self._server.get_host_and_port()
        return self

    def create_bucket(self, name: str) -> str:
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:
            if response.status != 200:
                raise S3Unavailable(f"creating bucket {name} answered HTTP {response.status}")
        return name

    def env(self) -> dict[str, str]:
        """The AWS variables pointing at this server (AWS_PROFILE etc. must not be set)."""
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": self.endpoint,
        }

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> LocalS3:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
