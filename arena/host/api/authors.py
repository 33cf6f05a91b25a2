"""Authors: registering with the invite code (public), and an author's own account and token."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request

from arena.host.api.deps import PREFIX, Authed, Host
from arena.host.api.limits import authenticate
from arena.host.api.views import author_out, bots_out
from arena.host.apitypes import Me, NewToken, Registration, RotatedToken
from arena.host.store import Author

router = APIRouter(prefix=PREFIX)


@router.post("/authors", response_model=NewToken, status_code=201)
def register(body: Registration, request: Request, host: Host) -> NewToken:
    expected = host.config.authors.invite_code
    if not expected:
        author, token = host.store.register_with_invite(body.name, body.invite_code, expected)
        return NewToken(author=author_out(author), token=token)

    def admitted(code: str) -> tuple[Author, str] | None:
        # A wrong code is a failed attempt (counted against the address, which a run of them
        # locks out); the store compares again, in constant time, and says why.
        if not hmac.compare_digest(code.encode(), expected.encode()):
            return None
        return host.store.register_with_invite(body.name, code, expected)

    made = authenticate(request, body.invite_code, admitted)
    if made is None:
        made = host.store.register_with_invite(body.name, body.invite_code, expected)
    author, token = made
    return NewToken(author=author_out(author), token=token)


@router.get("/me", response_model=Me)
def me(host: Host, author: Authed) -> Me:
    return Me(author=author_out(author), bots=bots_out(host.store, author.id, author))


@router.post("/me/token", response_model=RotatedToken)
def rotate(host: Host, author: Authed) -> RotatedToken:
    return RotatedToken(token=host.store.rotate_token(author.id))
