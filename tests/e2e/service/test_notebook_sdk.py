"""The calls real notebook code makes to the ModelArts SDK (Huawei's SDK reference pages and
public runners), through the stand-in SDK against the emulated cloud: one test per call."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from majob.emulator.cloud import EmulatedCloud
from majob.storage.obs import ObsObjectStore
from majob.testing import wait_until
from tests.e2e.service.fake_iam import DOMAIN, PASSWORD, USER, fake_iam

CODE = "obs://majob-demo/nb/code/"
DATA = "obs://majob-demo/nb/data/"
OUT = "obs://majob-demo/nb/out/"
ENGINE = ("PyTorch", "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64")
FLAVOR = "modelarts.vm.cpu.8u"
TERMINAL = ("Completed", "Failed", "Terminated", "Abnormal")


@pytest.fixture
def sdk(notebook: None, project: Path) -> Any:
    """The SDK's modules, and the project's code uploaded the way notebook users do."""
    from modelarts import estimatorV2, session, train_params

    session.Session().obs.copy(str(project / "code"), CODE, keep_last_dir=False)
    return _Sdk(estimatorV2, session, train_params, project)


class _Sdk:
    def __init__(self, estimator: Any, session: Any, params: Any, project: Path) -> None:
        self.Estimator = estimator.Estimator
        self.JOB_STATE = estimator.JOB_STATE
        self.Session = session.Session
        self.TrainingFiles = params.TrainingFiles
        self.InputData = params.InputData
        self.OutputData = params.OutputData
        self.project = project

    def estimator(self, **changes: Any) -> Any:
        """The documented preset-engine Estimator (sdkreference _0422 example 1)."""
        args: dict[str, Any] = {
            "session": self.Session(),
            "training_files": self.TrainingFiles(code_dir=CODE, boot_file="train.py"),
            "outputs": [self.OutputData(obs_path=OUT, name="train_url")],
            "parameters": [{"name": "sleep", "value": 0}],
            "framework_type": ENGINE[0],
            "framework_version": ENGINE[1],
            "train_instance_type": FLAVOR,
            "train_instance_count": 1,
            "log_url": "obs://majob-demo/nb/logs/",
        }
        return self.Estimator(**{**args, **changes})

    def local_data(self) -> Any:
        """The notebook's data dir, uploaded by ``fit`` (``is_local_source``)."""
        return self.InputData(
            obs_path=DATA,
            name="data_url",
            local_path=str(self.project / "data"),
            is_local_source=True,
        )


def ended(job: Any) -> dict[str, Any]:
    """``get_job_info()`` polled as public runners do, until the job ends."""
    return wait_until(  # type: ignore[no-any-return]
        lambda: (info := job.get_job_info())["status"]["phase"] in TERMINAL and info,
        "the job to end",
    )


def test_fit_wait_show_log_prints_the_log_and_returns_the_ended_job(
    sdk: _Sdk, store: ObsObjectStore, capsys: pytest.CaptureFixture[str]
) -> None:
    job = sdk.estimator().fit(
        inputs=[sdk.local_data()], job_name="nb-wait", wait=True, show_log=True
    )
    info = job.get_job_info()
    assert info["status"]["phase"] == "Completed"
    printed = capsys.readouterr().out
    assert "step 2" in printed and "done" in printed
    assert store.get_bytes("majob-demo", "nb/out/out.txt") == b"PAYLOAD"


def test_a_full_obs_boot_file_runs(sdk: _Sdk) -> None:
    files = sdk.TrainingFiles(code_dir=CODE, boot_file=CODE + "train.py")
    job = sdk.estimator(training_files=files).fit(inputs=[sdk.local_data()], job_name="nb-full")
    info = ended(job)
    assert info["status"]["phase"] == "Completed"
    assert info["algorithm"]["boot_file"] == "/majob-demo/nb/code/train.py"


def test_a_custom_image_with_a_command_and_no_training_files_runs(sdk: _Sdk) -> None:
    estimator = sdk.Estimator(
        session=sdk.Session(),
        job_description="This is a basic training job",
        user_image_url="deep-learning-demo/mpi:3.0.0-cuda10.2",
        user_command="echo hello-world",
        outputs=[sdk.OutputData(obs_path=OUT, name="model")],
        log_url="obs://majob-demo/nb/logs/",
        train_instance_type=FLAVOR,
        train_instance_count=1,
    )
    job = estimator.fit(job_name="job-0")
    assert ended(job)["status"]["phase"] == "Completed"
    assert "hello-world" in job.get_job_log()["content"]


def test_a_pool_without_a_flavor_runs_in_a_dedicated_cpu_pool(sdk: _Sdk) -> None:
    job = sdk.estimator(train_instance_type=None, pool_id="pool-cpu-0001").fit(
        inputs=[sdk.local_data()], job_name="nb-pool"
    )
    info = ended(job)
    assert info["status"]["phase"] == "Completed"
    assert info["spec"]["resource"]["pool_id"] == "pool-cpu-0001"
    assert "flavor_id" not in info["spec"]["resource"]


def test_the_arguments_that_reach_the_body(sdk: _Sdk) -> None:
    estimator = sdk.estimator(
        local_code_dir="/home/user-code",
        outputs=[
            sdk.OutputData(obs_path=OUT, name="train_url", local_path="/model", access_method="env")
        ],
    )
    data = sdk.InputData(obs_path=DATA, name="data_url", local_path="/home/ma-user/data_in")
    sdk.Session().obs.copy(str(sdk.project / "data"), DATA, keep_last_dir=False)
    algorithm = estimator.fit(inputs=[data], job_name="nb-body").get_job_info()["algorithm"]
    assert algorithm["local_code_dir"] == "/home/user-code"
    assert algorithm["outputs"][0]["local_dir"] == "/model"
    assert algorithm["outputs"][0]["access_method"] == "env"
    assert algorithm["inputs"][0]["local_dir"] == "/home/ma-user/data_in"


def test_a_job_attached_by_id_gives_its_info_and_log(sdk: _Sdk) -> None:
    created = sdk.estimator().fit(inputs=[sdk.local_data()], job_name="nb-attach")
    job = sdk.Estimator(session=sdk.Session(), job_id=created.job_id)
    info = ended(job)
    assert (info["metadata"]["id"], info["metadata"]["name"]) == (created.job_id, "nb-attach")
    log = job.get_job_log(task_id="worker-0")
    assert "done" in log["content"].splitlines()
    assert sdk.Estimator(session=sdk.Session(), job_id=created.job_id).get_job_log()["content"]
    metrics = job.get_job_metrics(task_id="worker-0")["metrics"]
    assert {m["metric"] for m in metrics} >= {"cpuUsage", "memUsage"}


def test_control_job_stops_a_running_job(sdk: _Sdk) -> None:
    job = sdk.estimator(parameters=[{"name": "sleep", "value": 60}]).fit(
        inputs=[sdk.local_data()], job_name="nb-stop"
    )
    wait_until(lambda: job.get_job_info()["status"]["phase"] == "Running", "Running")
    answer = job.control_job()
    assert answer["metadata"]["id"] == job.job_id
    assert ended(job)["status"]["phase"] == "Terminated"


def test_control_job_by_id_stops_a_job_by_its_id(sdk: _Sdk) -> None:
    job = sdk.estimator(parameters=[{"name": "sleep", "value": 60}]).fit(
        inputs=[sdk.local_data()], job_name="nb-stop-by-id"
    )
    wait_until(lambda: job.get_job_info()["status"]["phase"] == "Running", "Running")
    sdk.Estimator.control_job_by_id(session=sdk.Session(), job_id=job.job_id)
    assert ended(job)["status"]["phase"] == "Terminated"


def test_delete_job_and_delete_job_by_id(sdk: _Sdk) -> None:
    first = sdk.estimator().fit(inputs=[sdk.local_data()], job_name="nb-del-1")
    second = sdk.estimator().fit(inputs=[sdk.local_data()], job_name="nb-del-2")
    ended(first), ended(second)
    first.delete_job()
    sdk.Estimator.delete_job_by_id(session=sdk.Session(), job_id=second.job_id)
    for job in (first, second):
        with pytest.raises(Exception, match="404") as caught:
            job.get_job_info()
        assert "does not exist" in str(caught.value)


def test_get_job_list_with_the_documented_arguments(sdk: _Sdk) -> None:
    job = sdk.estimator().fit(inputs=[sdk.local_data()], job_name="trainjob-listed")
    listed = sdk.Estimator.get_job_list(
        session=sdk.Session(),
        offset=0,
        limit=5,
        sort_by="create_time",
        order="asc",
        filters=[{"key": "name", "operator": "like", "value": ["trainjob"]}],
    )
    assert [item["metadata"]["id"] for item in listed["items"]] == [job.job_id]
    assert listed["total"] == 1


def test_get_train_instance_types_lists_the_flavors(sdk: _Sdk) -> None:
    flavors = sdk.Estimator.get_train_instance_types(sdk.Session())
    assert FLAVOR in {flavor["flavor_id"] for flavor in flavors}


def test_job_state_is_importable_and_names_the_old_status_codes(sdk: _Sdk) -> None:
    assert sdk.JOB_STATE[10] == "JOBSTAT_COMPLETED"
    assert sdk.JOB_STATE[11] == "JOBSTAT_FAILED"


def test_set_endpoint_points_the_sessions_made_after_it(sdk: _Sdk, cloud: EmulatedCloud) -> None:
    endpoints = cloud.endpoints
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{probe.getsockname()[1]}"
    keys = (endpoints.access_key, endpoints.secret_key, endpoints.project_id, endpoints.region)
    sdk.Session.set_endpoint(modelarts_endpoint=nowhere, region_name=endpoints.region)
    with pytest.raises(ConnectionError):
        sdk.Estimator.get_job_list(sdk.Session(*keys))
    sdk.Session.set_endpoint(
        iam_endpoint=nowhere,
        obs_endpoint=endpoints.obs,
        modelarts_endpoint=endpoints.modelarts,
        region_name=endpoints.region,
    )
    assert sdk.Estimator.get_job_list(sdk.Session(*keys))["total"] == 0


def test_an_ak_sk_session_signs_with_its_keys(sdk: _Sdk, cloud: EmulatedCloud) -> None:
    endpoints = cloud.endpoints
    good = sdk.Session(
        access_key=endpoints.access_key,
        secret_key=endpoints.secret_key,
        project_id=endpoints.project_id,
        region_name=endpoints.region,
    )
    assert sdk.Estimator.get_job_list(session=good)["total"] == 0
    bad = sdk.Session(endpoints.access_key, "0" * 40, endpoints.project_id, endpoints.region)
    with pytest.raises(Exception, match="401") as caught:
        sdk.Estimator.get_job_list(session=bad)
    assert "0" * 40 not in str(caught.value)


def test_session_obs_copies_both_ways(sdk: _Sdk, tmp_path: Path) -> None:
    obs = sdk.Session().obs
    assert obs.is_obs_path_exists(CODE + "train.py")
    assert not obs.is_obs_path_exists(CODE + "missing.py")
    obs.copy(CODE, str(tmp_path))  # a directory keeps its name
    copied = (tmp_path / "code" / "train.py").read_text()
    assert copied == (sdk.project / "code" / "train.py").read_text()
    obs.download_file(CODE + "train.py", str(tmp_path / "one.py"))
    assert (tmp_path / "one.py").exists()
    assert obs.get_default_bucket() == "majob-demo"
    client = sdk.Session().get_obs_client()
    assert client.headObject("majob-demo", "nb/code/train.py").status == 200


def test_password_sessions_of_an_account_and_of_an_iam_user(
    sdk: _Sdk, cloud: EmulatedCloud
) -> None:
    endpoints = cloud.endpoints
    where = {"region_name": endpoints.region, "project_id": endpoints.project_id}
    with fake_iam(endpoints.access_key, endpoints.secret_key) as iam:
        sdk.Session.set_endpoint(
            iam_endpoint=iam,
            obs_endpoint=endpoints.obs,
            modelarts_endpoint=endpoints.modelarts,
            region_name=endpoints.region,
        )
        user = sdk.Session(account=DOMAIN, username=USER, password=PASSWORD, **where)
        assert user.security_token  # temporary keys, with their token
        assert sdk.Estimator.get_job_list(session=user)["total"] == 0
        assert user.obs.is_obs_path_exists(CODE + "train.py")
        with pytest.raises(PermissionError, match="401"):
            sdk.Session(username=DOMAIN, password="wrong-password", **where)
        with pytest.raises(ValueError, match="needs username, password"):
            sdk.Session(username=USER, password=PASSWORD)
