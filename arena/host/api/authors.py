"""Authors: registering with the invite code (public), and an author's own account and token."""

from __future__ import annotations

from fastapi import APIRouter

from arena.host.api.deps import PREFIX, Authed, Host
from arena.host.api.views import author_out, bots_out
from arena.host.apitypes import Me, NewToken, Registration, RotatedToken

router = APIRouter(prefix=PREFIX)


@router.post("/authors", response_model=NewToken, status_code=201)
def register(body: Registration, host: Host) -> NewToken:
    author, token = host.store.register_with_invite(
        body.name, body.invite_code, host.config.authors.invite_code
    )
    return NewToken(author=author_out(author), token=token)


@router.get("/me", response_model=Me)
def me(host: Host, author: Authed) -> Me:
    return Me(author=author_out(author), bots=bots_out(host.store, author.id, author))


@router.post("/me/token", response_model=RotatedToken)
def rotate(host: Host, author: Authed) -> RotatedToken:
    return RotatedToken(token=host.store.rotate_token(author.id))
