"""`agentteams -p --json-schema` as a real process against the scripted server, as Claude Code 2.1.332 does it: the
StructuredOutput tool offered with the schema as its input; an accepted call ends the turn with `structured_output`;
a failed check is an error result the model may retry, until the retries run out; a text answer is reminded once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentteams.mockapi import MockServer
from tests.support.cli import Cli
from tests.support.headless import agentteams

SCHEMA = {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}


def _call(value: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": "StructuredOutput", "input": value}]}


def _run(cli: Cli, tmp_path: Path, turns: list[Any], *more: str) -> tuple[int, list[dict[str, Any]], MockServer]:
    spec = {"routes": [{"name": "main", "match": {"tools": True}, "turns": turns, "idle": "never asked"}]}
    with MockServer(spec) as server:
        proc = agentteams(cli, tmp_path, "-p", "go", "--output-format", "stream-json", "--verbose",
                          "--json-schema", json.dumps(SCHEMA), *more, base_url=server.base_url)  # fmt: skip
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], server


def test_an_accepted_call_ends_the_turn_with_the_value(cli: Cli, tmp_path: Path) -> None:
    code, lines, server = _run(cli, tmp_path, [_call({"a": 1})])
    result = lines[-1]
    assert code == 0 and (result["subtype"], result["is_error"], result["num_turns"]) == ("success", False, 2)
    assert result["structured_output"] == {"a": 1} and result["result"] == '{"a":1}'
    requests = [r for r in server.requests if r.get("route") == "main"]
    assert len(requests) == 1  # nothing is asked after the value
    offered = {t["name"]: t for t in requests[0]["body"]["tools"]}
    assert offered["StructuredOutput"]["input_schema"] == SCHEMA
    assert "StructuredOutput" in lines[0]["tools"]


def test_a_value_off_the_schema_is_an_error_the_model_may_retry(cli: Cli, tmp_path: Path) -> None:
    code, lines, _ = _run(cli, tmp_path, [_call({"a": "x"}), _call({"a": 5})])
    told = [b for line in lines if line["type"] == "user" for b in line["message"]["content"]]
    assert told[0]["is_error"] is True and told[0]["content"].startswith("Output does not match required schema: /a")
    assert code == 0 and lines[-1]["structured_output"] == {"a": 5} and lines[-1]["num_turns"] == 3


def test_the_turn_ends_in_its_error_once_the_retries_run_out(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_STRUCTURED_OUTPUT_RETRIES", "2")  # Claude Code's variable (5 when unset)
    code, lines, server = _run(cli, tmp_path, [_call({"a": "x"}), _call({"a": "y"}), _call({"a": 1})])
    result = lines[-1]
    assert code == 1 and (result["subtype"], result["is_error"]) == ("error_max_structured_output_retries", True)
    assert result["terminal_reason"] == "structured_output_retry_exhausted" and result["num_turns"] == 3
    assert result["errors"][0].startswith("Failed to provide valid structured output after 2 attempts")
    assert "structured_output" not in result
    assert len([r for r in server.requests if r.get("route") == "main"]) == 2


def test_a_text_answer_is_reminded_once_then_the_text_is_the_result(cli: Cli, tmp_path: Path) -> None:
    code, lines, server = _run(cli, tmp_path, ["plain words", "still words"])
    reminders = [line for line in lines if line["type"] == "user" and line.get("isSynthetic")]
    assert len(reminders) == 1 and "StructuredOutput" in reminders[0]["message"]["content"][0]["text"]
    assert code == 0 and lines[-1]["subtype"] == "success" and lines[-1]["result"] == "still words"
    assert "structured_output" not in lines[-1]
    assert len([r for r in server.requests if r.get("route") == "main"]) == 2


def test_text_output_prints_the_value_s_json(cli: Cli, tmp_path: Path) -> None:
    spec = {"routes": [{"name": "main", "match": {"tools": True}, "turns": [_call({"a": 2})]}]}
    with MockServer(spec) as server:
        proc = agentteams(cli, tmp_path, "-p", "go", "--json-schema", json.dumps(SCHEMA), base_url=server.base_url)
    assert (proc.returncode, proc.stdout.strip()) == (0, '{"a":2}')


def test_a_schema_that_is_not_one_is_one_clear_line(cli: Cli, tmp_path: Path) -> None:
    for bad, why in (("nope", "is not valid JSON"), ('{"type": "bogus"}', "is not a valid JSON Schema")):
        proc = agentteams(cli, tmp_path, "-p", "go", "--json-schema", bad, base_url="http://127.0.0.1:9")
        assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert f"--json-schema {why}" in proc.stderr
