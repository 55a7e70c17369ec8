"""Seed 004's pages: the Memory settings tab and a chat page, served by the app.

Plain HTML with one small script and one stylesheet, shipped with the package (no build step,
no CDN). The pages call the JSON API with the signed-in user's Supabase access token, which
they keep in sessionStorage: `/signin#token=<access token>` stores it (what `make serve`
prints a link to); an app with its own Supabase session stores `session.access_token` under the
same key (`supamem.token`) before opening a page.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse

STATIC = Path(__file__).parent / "static"

router = APIRouter(include_in_schema=False)


#: The pages run only this site's own scripts and styles (none inline), talk only to this site, and
#: are framed by nobody: an injected script or a clickjacking frame has nothing to work with.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _page(name: str) -> HTMLResponse:
    return HTMLResponse((STATIC / name).read_text(encoding="utf-8"), headers=PAGE_HEADERS)


@router.get("/signin")
def signin() -> HTMLResponse:
    return _page("signin.html")


@router.get("/chat")
def chat_page() -> HTMLResponse:
    return _page("chat.html")


@router.get("/settings/memory")
def memory_settings() -> HTMLResponse:
    return _page("settings.html")


@router.get("/static/{name}")
def static(name: str) -> FileResponse:
    path = (STATIC / name).resolve()
    if path.parent != STATIC.resolve() or not path.is_file():
        return FileResponse(STATIC / "missing.txt", status_code=404)
    return FileResponse(path, headers={"Cache-Control": "no-store"})
