"""A job on one of the project's images runs the code it ships, so it must ship some.

The project image holds a copy of its build context for its build-time import check, outside `/opt/ml/code` and
with no `SAGEMAKER_PROGRAM`: the SageMaker training toolkit unpacks a job's code bundle only into an empty
`/opt/ml/code` (`sagemaker_training.files.download_and_extract`), and a program named in the image's environment wins
over the job's `sagemaker_program` (`sagemaker_training.environment`), so either would make a job silently run the
image's copy instead of its own. Without `entry_point` such a job would have no program at all.
"""

from __future__ import annotations

from compiler.model import ProjectImage, Workload
from compiler.reader import Findings
from compiler.rules.registry import workload_rule


@workload_rule
def project_images_run_the_code_the_job_ships(w: Workload, f: Findings) -> None:
    if isinstance(w.image, ProjectImage) and w.code is None:
        f.problem("entry_point", f"a job on the project image '{w.image.repository}' runs the code it ships, and "
                  f"this one ships none: add entry_point (the script, e.g. train.py) and source_dir (its folder, "
                  f"e.g. ../training)")
