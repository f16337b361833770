"""An aiohttp server on 127.0.0.1 and a free port, started and stopped the same way by every fake API."""

from __future__ import annotations

from aiohttp import web


class LocalServer:
    """Base of the fake APIs: subclasses add their routes in `routes`; ``root`` is ``http://127.0.0.1:PORT``
    once started. Usable as ``async with``."""

    root: str = ""
    _runner: web.AppRunner | None = None

    def routes(self, app: web.Application) -> None:
        """Add the fake's routes to ``app``."""
        raise NotImplementedError

    async def start(self) -> None:
        """Starts listening on 127.0.0.1, on a free port chosen by the OS (no access log)."""
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        host, port = self._runner.addresses[0][:2]
        self.root = f"http://{host}:{port}"

    async def stop(self) -> None:
        """Stops the server (waiting requests are cut); calling it twice, or before `start`, is harmless."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self):
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
