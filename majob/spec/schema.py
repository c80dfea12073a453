"""The JSON Schema of a job spec, for editors (yaml-language-server) and other tools."""

from __future__ import annotations

from typing import Any

from majob.spec.models import JobSpec

SCHEMA_FILE = "majob.schema.json"
SCHEMA_HEADER = f"# yaml-language-server: $schema={SCHEMA_FILE}"


def spec_json_schema() -> dict[str, Any]:
    """The spec's JSON Schema (draft 2020-12), generated from the pydantic models."""
    schema = JobSpec.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "majob job spec",
        **schema,
    }
