"""spec/dialects.json is what the compiler trusts (E914 refuses a dialect not marked served): every
dialect marked served must be answered by the gateway on its paths, and one not marked must not be
(so marking follows the gateway, in both directions)."""
from __future__ import annotations

import pytest

from mlabc.resources import spec_json
from mlab.external.gateway import Gateway
from mlab.models.usage import Usage
from test_gateway_path import OneReply, UnixConnection

DIALECTS = spec_json("dialects.json")["dialects"]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gw")
    served = Gateway(str(folder / "gw.sock"), OneReply(), {}, lambda *a: None, Usage(), 0, lambda end: None)
    served.start()
    yield served
    served.stop()


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_the_served_dialects_are_the_ones_the_gateway_answers(gateway, dialect):
    answered = []
    for path in DIALECTS[dialect]["paths"]:
        connection = UnixConnection(gateway.socket_path)
        method = "GET" if path.endswith("/models") else "POST"
        connection.request(method, path, b"" if method == "POST" else None,
                           {"Authorization": f"Bearer {gateway.key}", "x-api-key": gateway.key,
                            "x-goog-api-key": gateway.key, "Content-Type": "application/json"})
        answered.append(connection.getresponse().status != 404)
        connection.close()
    if DIALECTS[dialect]["served"]:
        assert all(answered), f"spec/dialects.json marks {dialect} served, but the gateway has no {path}"
    else:
        assert not any(answered), f"the gateway answers {dialect}: mark it served in spec/dialects.json"
