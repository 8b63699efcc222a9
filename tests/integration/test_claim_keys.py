"""docs/PROTOCOL-1.2.md section 5a: the daemon names the `claim_request_key` feature
over the socket. What a repeated key returns is the store tier's
(tests/store/test_claims.py); the clients' own key-and-retry is tested in
tests/system/test_claim_retry.py.
"""

from __future__ import annotations

import pytest

from coordd_client.aio import AsyncClient

pytestmark = pytest.mark.both_backends


async def test_the_daemon_names_the_feature(aclient: AsyncClient) -> None:
    assert await aclient.supports("claim_request_key")
