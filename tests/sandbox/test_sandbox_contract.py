"""The sandbox keeps its contract: third-party tools check its OpenAPI document and its answers.

schemathesis (every check, a fixed seed, bounded examples) fuzzes the running sandbox over
loopback and must find nothing; openapi-spec-validator validates the document; the SDK's own
models parse every 2xx answer schemathesis saw (one corpus for the emulator and the client).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from openapi_spec_validator import validate

from sports_posts import AccountInformation, ComplianceList, IdList, PostsResponse, TeamList
from sports_posts.sandbox import Sandbox

from .contract import ERROR_CODES, parameter_schemas

HERE = Path(__file__).parent
EXAMPLES_PER_OPERATION = 20
"""About 40 s for the whole run on the 2-core CI machine (10 operations, 2 workers)."""
SEED = 20261123


def test_document_is_valid_openapi_3_1(sb: Sandbox) -> None:
    validate(sb.openapi())  # raises on any violation of the OpenAPI 3.1 schema


def test_closed_lists_in_the_document_are_the_code_s_own(sb: Sandbox) -> None:
    doc = sb.openapi()
    expected = parameter_schemas()
    posts = {p["name"]: p["schema"] for p in doc["paths"]["/posts"]["get"]["parameters"]}
    ids = {f"ids.{p['name']}": p["schema"] for p in doc["paths"]["/ids"]["get"]["parameters"]}
    for name, schema in expected.items():
        actual = {**posts, **ids}[name]
        assert {k: actual.get(k) for k in schema} == schema, name
    assert doc["components"]["schemas"]["Error"]["properties"]["error_code"]["enum"] == ERROR_CODES
    teams_or_ids = doc["paths"]["/ids"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert "anyOf" in teams_or_ids and "oneOf" not in teams_or_ids  # a teams answer matches both


def _parse_with_the_sdk(path: str, query: dict[str, list[str]], body: bytes) -> Any:
    """The SDK's model of a 2xx answer of ``path`` (what a customer's client would build)."""
    if path.endswith("/posts"):
        return PostsResponse.model_validate_json(body)
    if path.endswith("/account/information"):
        return AccountInformation.model_validate_json(body)
    if path.endswith("/account/x-ids"):
        return ComplianceList.model_validate_json(body)
    assert path.endswith("/ids"), path
    reference = query.get("reference_id", [None])[0]
    if query["entity"][0].strip().lower() == "teams":
        return TeamList.model_validate_json(body, context={"reference_id": reference})
    return IdList.model_validate_json(body, context={"reference_id": reference})


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.CompletedProcess[str], Path]]:
    """One schemathesis run against a private sandbox: its outcome and its HAR corpus."""
    st = shutil.which("st", path=str(Path(sys.executable).parent))
    assert st, "schemathesis is a development dependency: pip install -e '.[dev]'"
    out = tmp_path_factory.mktemp("schemathesis")
    har = out / "corpus.har"
    with Sandbox(seed=5, clock="manual", posts=600) as sb:
        command = [
            st, "--config-file", str(HERE / "schemathesis.toml"), "run", f"{sb.base_url}/openapi.json",
            "--checks", "all", "--mode", "all", "--seed", str(SEED), "--max-examples", str(EXAMPLES_PER_OPERATION),
            "--workers", "2", "--no-shrink", "--header", f"Authorization: Bearer {sb.api_key}",
            "--report", "har", "--report-har-path", str(har), "--request-timeout", "10",
        ]
        if sys.version_info < (3, 10):
            # Python 3.9 gets schemathesis 4.4, the last release for it. Its coverage phase spends
            # minutes deriving boundary values from the long case-insensitive patterns, and its
            # negative check counts an unknown query parameter as invalid data, which OpenAPI does
            # not say (the service ignores such parameters). Every phase and check runs from 3.10 on.
            command += ["--phases", "examples,fuzzing", "--exclude-checks", "negative_data_rejection"]
        # The timeout guards against a hang only; the examples bound the run's length.
        result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=out,
                                env={"PATH": "/usr/bin:/bin", "SCHEMATHESIS_TELEMETRY": "false",
                                     "HOME": str(out), "NO_COLOR": "1"})
    yield result, har


def test_schemathesis_with_every_check_finds_nothing(fuzzed: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    result, _ = fuzzed
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "generated" in result.stdout  # it really ran


def test_the_sdk_models_parse_every_2xx_answer_schemathesis_saw(
    fuzzed: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, har = fuzzed
    entries = json.loads(har.read_text("utf-8"))["log"]["entries"]
    parsed: dict[str, int] = {}
    for entry in entries:
        response = entry["response"]
        if not 200 <= response["status"] < 300:
            continue
        url = urlsplit(entry["request"]["url"])
        body = response["content"].get("text", "").encode("utf-8")
        _parse_with_the_sdk(url.path, parse_qs(url.query, keep_blank_values=True), body)
        parsed[url.path] = parsed.get(url.path, 0) + 1
    assert {"/v1/posts", "/v1/account/information", "/v1/account/x-ids", "/v1/ids"} <= set(parsed), parsed
