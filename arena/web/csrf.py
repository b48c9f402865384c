"""CSRF protection of the web's forms.

- Forms of a logged-in session (log out, upload, challenge, retire) carry the session's own token
  (synchroniser pattern: `WebSession.csrf`, kept server-side, compared in constant time).
- The log-in form has no session yet: it uses a double-submit cookie, `elfern_login` (HttpOnly,
  SameSite=Strict), set when the form is shown, whose value the form repeats.

A POST without the token, or with a wrong one, is refused with 403. The session cookie is
SameSite=Strict as well, so a cross-site form never carries it in the first place. The JSON API takes
no cookies (only `Authorization: Bearer`), so it needs no CSRF token.
"""

from __future__ import annotations

import hmac
import secrets

from fastapi import HTTPException, Request

from arena.web.sessions import WebSession

FIELD = "csrf"  # the hidden form field
LOGIN_COOKIE = "elfern_login"
LOGIN_AGE = 3600  # seconds the log-in form stays usable


def same(expected: str | None, presented: str | None) -> bool:
    if not expected or not presented:
        return False
    return hmac.compare_digest(str(expected).encode(), str(presented).encode())  # bytes: any characters


def login_token(request: Request) -> tuple[str, bool]:
    """The log-in form's token: the cookie's if it has one, else a new one (True: set the cookie)."""
    token = request.cookies.get(LOGIN_COOKIE)
    if not token or len(token) > 100:
        return secrets.token_urlsafe(32), True
    return token, False


def check_login(request: Request, presented: str | None) -> None:
    if not same(request.cookies.get(LOGIN_COOKIE), presented):
        raise HTTPException(
            403, "the log-in form expired or came from another site: reload the log-in page and try again"
        )


def check(session: WebSession, presented: str | None) -> None:
    if not same(session.csrf, presented):
        raise HTTPException(
            403, "this form is missing its CSRF token or has a stale one: reload the page and submit it again"
        )
