from __future__ import annotations

from pathlib import Path

import pytest

from majob.image.dockerfile import DockerfileSyntaxError
from majob.image.install_steps import Step, steps_of
from majob.image.lint import lint_dockerfile, lint_file

GOOD = """\
# syntax=docker/dockerfile:1
ARG BASE=ubuntu:22.04
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \\
    && rm -rf /var/lib/apt/lists/*
RUN apt-get update && apt-get install -y python3.10 python3-pip && rm -rf /var/lib/apt/lists/*
RUN pip install --no-cache-dir torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu
COPY requirements.txt /tmp/requirements.txt
RUN pip install --no-cache-dir -r /tmp/requirements.txt && rm /tmp/requirements.txt
RUN useradd -m -u 1000 -g 100 -d /home/ma-user -s /bin/bash ma-user
ENV PYTHONUNBUFFERED=1
USER ma-user
"""
TAIL = "ENV PYTHONUNBUFFERED=1\nUSER ma-user\n"


def rules(text: str) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in lint_dockerfile(text)]


def test_a_good_dockerfile_is_clean() -> None:
    assert lint_dockerfile(GOOD) == []


def test_every_rule_with_its_line() -> None:
    text = """\
FROM nvidia/cuda:12.1.1-runtime-ubuntu22.04
RUN apt-get update
RUN apt-get install -y git && rm -rf /var/lib/apt/lists/*
RUN pip install numpy pandas
RUN pip install --no-cache-dir torch==2.1.0
RUN conda create -n py39 python=3.9 && conda clean -afy
COPY . /home/ma-user/code
COPY requirements.txt /tmp/
ADD data/train.csv /data/
USER root
"""
    assert rules(text) == [
        (1, "pythonunbuffered"),
        (2, "separate-run"),  # an index update alone
        (3, "separate-run"),  # the install that belongs with it
        (4, "package-cache"),
        (5, "layer-order"),
        (6, "conda-create"),
        (7, "code-or-data-copied"),
        (9, "code-or-data-copied"),
        (10, "user"),
    ]
    messages = {f.line: f.message for f in lint_dockerfile(text)}
    assert messages[5].startswith("installs PyTorch after other packages (line 4)")
    assert messages[7].startswith("COPY . puts code in the image")
    assert messages[9].startswith("ADD data/train.csv puts data in the image")


def test_two_runs_of_one_kind_should_be_one() -> None:
    text = (
        "FROM python:3.11-slim\nRUN pip install --no-cache-dir numpy\nRUN pip install --no-cache-dir pandas\n"
        + TAIL
    )
    findings = lint_dockerfile(text)
    assert [(f.line, f.rule) for f in findings] == [(3, "separate-run")]
    assert "the RUN at line 2" in findings[0].message


def test_package_caches() -> None:
    text = (
        "FROM centos:7\nRUN yum install -y gcc\nENV X=1\nRUN apk add curl\nENV Y=1\n"
        "RUN conda install -y numpy\n" + TAIL
    )
    found = {(f.line, f.message.split(":")[0]) for f in lint_dockerfile(text)}
    assert found >= {
        (2, "yum/dnf cache left in the layer"),
        (4, "apk cache left in the layer"),
        (6, "conda package cache left in the layer"),
    }


def test_pip_no_cache_env_counts() -> None:
    text = "FROM python:3.11\nENV PIP_NO_CACHE_DIR=1\nRUN pip install numpy\n" + TAIL
    assert rules(text) == []


@pytest.mark.parametrize("user", ["1000", "1000:100", "ma-user:ma-group", "trainer"])
def test_uid_1000_users_pass(user: str) -> None:
    text = (
        "FROM python:3.11\nRUN useradd -m -u 1000 -g 100 trainer\n"
        f"ENV PYTHONUNBUFFERED=1\nUSER {user}\n"
    )
    assert rules(text) == []


def test_missing_user_points_at_the_final_stage() -> None:
    text = (
        "FROM python:3.11 AS build\nUSER ma-user\nFROM python:3.11-slim\nENV PYTHONUNBUFFERED=1\n"
    )
    assert rules(text) == [(3, "user")]


def test_copy_from_another_stage_is_not_code() -> None:
    text = "FROM a AS build\nRUN make\nFROM b\nCOPY --from=build /out/lib /opt/lib\n" + TAIL
    assert rules(text) == []


def test_pythonunbuffered_zero_does_not_count() -> None:
    assert rules("FROM a\nENV PYTHONUNBUFFERED=0\nUSER ma-user\n") == [(1, "pythonunbuffered")]


@pytest.mark.parametrize(
    ("command", "steps"),
    [
        ("apt-get update && apt-get install -y curl", {Step.OS}),
        ("apt-get install -y python3.10", {Step.OS, Step.PYTHON}),
        ("apt-get install -y cuda-toolkit-12-1", {Step.OS, Step.CUDA}),
        ("pip install torch==2.1.0 --index-url https://x/whl/cpu", {Step.PYTORCH}),
        ("pip install -r requirements.txt", {Step.PACKAGES}),
        ("python -m pip install numpy torch", {Step.PYTORCH, Step.PACKAGES}),
        ("echo hello", set()),
    ],
)
def test_steps_of(command: str, steps: set[Step]) -> None:
    assert steps_of(command) == steps


# -- syntax the parser rejects -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("FROM a\nRUNN apt-get update\n", "Dockerfile:2: unknown instruction 'RUNN'"),
        ("FROM a\nRUN echo hi \\\n", "Dockerfile:2: 'RUN echo hi \\\\' belongs to no instruction"),
        ('FROM a\nENV A="unclosed\n', "Dockerfile:2: ENV: No closing quotation"),
        ("FROM a\nENV LONELY\n", "Dockerfile:2: ENV LONELY has no value"),
        ("RUN apt-get update\nFROM a\n", "Dockerfile:1: a Dockerfile starts with FROM"),
        ("# only a comment\n", "Dockerfile:1: a Dockerfile starts with FROM"),
        ("FROM a\nRUN <<EOF\napt-get update\nEOF\n", "Dockerfile:2: heredocs"),
        ("FROM a\nWORKDIR\n", "Dockerfile:2: WORKDIR needs an argument"),
    ],
)
def test_syntax_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(DockerfileSyntaxError) as caught:
        lint_dockerfile(text)
    assert caught.value.message.startswith(message)


def test_lint_file_reads_and_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "Dockerfile"
    path.write_text("FROM a\nUSER root\n")
    assert [f.render(str(path)) for f in lint_file(path)][-1] == (
        f"{path}:2: user: USER root: ModelArts runs custom images as uid 1000 (ma-user, gid 100); "
        "end with USER ma-user (or USER 1000:100)"
    )
