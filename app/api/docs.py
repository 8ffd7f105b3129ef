"""/docs (Swagger UI) and /redoc served from assets shipped in a pip package (`fastapi-offline`), so
the API documentation loads on a machine without internet: no CDN, no Google Fonts."""
from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
# The pages may load nothing from elsewhere: ReDoc's bundle would fetch its vendor's logo from a CDN.
_SAME_ORIGIN_ONLY = {"Content-Security-Policy": "default-src 'self'; script-src 'self' 'unsafe-inline'; "
                     "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; "
                     "worker-src 'self' blob:; connect-src 'self'"}


def assets_dir() -> str:
    """The Swagger UI and ReDoc bundles inside the installed `fastapi_offline` package."""
    return str(files("fastapi_offline") / "static")


def mount_docs(app: FastAPI, docs_url: str = "/docs", redoc_url: str = "/redoc") -> None:
    app.mount(ASSETS_URL, StaticFiles(directory=assets_dir()), name="docs-assets")
    oauth_redirect = f"{docs_url}/oauth2-redirect"

    @app.get(docs_url, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - API docs",
            oauth2_redirect_url=f"{root}{oauth_redirect}",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )
        page.headers.update(_SAME_ORIGIN_ONLY)
        return page

    @app.get(oauth_redirect, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get(redoc_url, include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}", title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png", with_google_fonts=False,
        )
        page.headers.update(_SAME_ORIGIN_ONLY)
        return page
