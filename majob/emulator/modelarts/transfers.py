"""What a job's container exchanges with OBS: the code and inputs downloaded into a new
container, the outputs marked for predownload downloaded before each run, the outputs uploaded
(periodically and when a run ends) and the task logs exported.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from majob.emulator.modelarts.container import JobContainer
from majob.emulator.modelarts.plan import JobPlan
from majob.emulator.modelarts.storage import JobStorage
from majob.text import counted


class JobTransfers:
    """One job's OBS traffic; ``say`` writes a service line into every task's log, ``log_of``
    is a task's log file."""

    def __init__(
        self,
        plan: JobPlan,
        storage: JobStorage,
        job_id: str,
        *,
        say: Callable[[str], None],
        log_of: Callable[[str], Path],
    ) -> None:
        self.plan = plan
        self.storage = storage
        self.job_id = job_id
        self.say = say
        self.log_of = log_of

    def download(self, container: JobContainer) -> None:
        """The code and the inputs, into a new container."""
        if self.plan.code_dir is None:
            self.say("no code dir: the image's command brings its own code")
        else:
            count = self.storage.download(self.plan.code_dir, container.code_dir)
            self.say(
                f"downloaded {counted(count, 'code file')} from {self.plan.code_dir.rest_path}"
            )
        for channel in self.plan.inputs:
            if not self.storage.exists(channel.uri):
                raise RuntimeError(f"input {channel.name}: no data at {channel.uri.rest_path}")
            count = self.storage.download(channel.uri, container.inputs[channel.name])
            files = counted(count, "file")
            self.say(f"downloaded input {channel.name}: {files} from {channel.uri.rest_path}")

    def predownload(self, container: JobContainer) -> None:
        """The files of each output marked for predownload (its checkpoints), from OBS into
        the container, before the nodes start."""
        for channel in self.plan.outputs:
            if channel.predownload and self.storage.exists(channel.uri.as_dir()):
                count = self.storage.download(channel.uri, container.outputs[channel.name])
                self.say(
                    f"predownloaded output {channel.name}: {counted(count, 'file')} from "
                    f"{channel.uri.rest_path}"
                )

    def upload_outputs(self, container: JobContainer | None) -> None:
        """Each output channel's dir to its OBS path (what exists of it so far)."""
        if container is None:
            return  # stopped before the container was built: nothing was written
        for channel in self.plan.outputs:
            directory = container.outputs[channel.name]
            if directory.is_dir():
                self.storage.upload_tree(directory, channel.uri)

    def export_logs(self) -> None:
        """Each task's log to ``log_export_path`` as ``modelarts-job-<id>-worker-<i>.log``."""
        if self.plan.log_export is None:
            return
        for index in range(self.plan.nodes):
            log = self.log_of(f"worker-{index}")
            if log.exists():
                name = f"modelarts-job-{self.job_id}-worker-{index}.log"
                self.storage.upload_file(log, self.plan.log_export.join(name), "text/plain")
