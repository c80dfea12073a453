"""Fault rules: matching, counting, seeded probability; the request log."""

from __future__ import annotations

import pytest

from majob.emulator.obs.faults import FaultInjector, FaultRule, LoggedRequest, RequestLog


def test_first_matching_rule_fires_until_its_count_is_spent() -> None:
    faults = FaultInjector(
        [
            FaultRule(status=503, method="PUT", path=r"^/bkt/data/", count=2),
            FaultRule(reset=True, query=r"partNumber=3\b"),
        ]
    )
    assert faults.pick("GET", "/bkt/data/x", "") is None
    picked = [faults.pick("PUT", "/bkt/data/x", "") for _ in range(3)]
    assert [f.label if f else None for f in picked] == ["status:503", "status:503", None]
    fault = faults.pick("PUT", "/bkt/big", "partNumber=3&uploadId=U")
    assert fault is not None and fault.reset and fault.label == "reset"
    assert faults.pick("PUT", "/bkt/big", "partNumber=30&uploadId=U") is None


def test_default_codes_follow_the_status() -> None:
    faults = FaultInjector([FaultRule(status=500), FaultRule(status=403, code="AccessDenied")])
    fault = faults.pick("GET", "/b/k", "")
    assert fault is not None and (fault.status, fault.code) == (500, "InternalError")


def test_latency_only_rule() -> None:
    fault = FaultInjector([FaultRule(latency=0.25)]).pick("GET", "/", "")
    assert fault is not None and fault.latency == 0.25 and fault.label == "latency:0.25"


def test_probability_replays_with_the_same_seed() -> None:
    def run(seed: int) -> list[bool]:
        faults = FaultInjector([FaultRule(status=503, probability=0.3)], seed=seed)
        return [faults.pick("PUT", "/b/k", "") is not None for _ in range(200)]

    assert run(7) == run(7)
    assert run(7) != run(8)
    assert 30 < sum(run(7)) < 90


def test_clear_and_reseed() -> None:
    faults = FaultInjector([FaultRule(status=503)])
    faults.clear(seed=1)
    assert faults.rules == [] and faults.pick("GET", "/", "") is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "needs a status"),
        ({"status": 503, "probability": 2.0}, "between 0 and 1"),
        ({"status": 503, "path": "("}, r"path '\(' is not a regular expression: missing \)"),
        ({"status": 503, "query": "[a"}, r"query '\[a' is not a regular expression"),
    ],
)
def test_invalid_rules(fields: dict[str, object], message: str) -> None:
    # ValueError, which the control API answers with 400 (a bare re.error would be a 500).
    with pytest.raises(ValueError, match=message):
        FaultRule(**fields)  # type: ignore[arg-type]


def test_rules_from_json_dicts() -> None:
    rule = FaultRule.from_dict({"status": 503, "count": 1})
    assert rule.to_dict()["status"] == 503
    with pytest.raises(ValueError, match="unknown fault rule fields: colour"):
        FaultRule.from_dict({"status": 503, "colour": "red"})


def test_request_log_counts() -> None:
    log = RequestLog(limit=3)
    for method, query in [("PUT", ""), ("GET", "list-type=2"), ("GET", ""), ("POST", "uploads")]:
        log.append(LoggedRequest(method, "/b", query, 200, "amz", "v4"))
    assert [e.method for e in log.entries()] == ["GET", "GET", "POST"]
    assert log.count("GET") == 2 and log.count(query="^uploads") == 1
    log.clear()
    assert log.entries() == []
