"""SageMaker's built-in algorithms: what each one documents about training (its channels, input modes, content types,
instances and processors), each fact with the page of the SageMaker Developer Guide it comes from.

A workload names one with `image: {algorithm, version}`; its image is the SDK's own catalog entry of that name
(`sagemaker/image_uri_config/<name>.json`, resolved per region by `compiler.sdk.framework_images.retrieve`), and
`compiler/rules/algorithms.py` holds a workload to these facts. A fact left out (None, empty) is one the guide does not
state plainly enough to refuse a job on: such a field is not checked.

Sources: the guide's table "Parameters for built-in algorithms" (COMMON: channel names, training input modes, instance
class, whether the algorithm is parallelizable, i.e. trains on several instances), and each algorithm's own page
(its "Input/Output interface" and "EC2 instance recommendation" sections), which the `source` of each entry names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/"
COMMON = GUIDE + "common-info-all-im-models.html"

CSV = "text/csv"
PROTOBUF = "application/x-recordio-protobuf"
TEXT = "text/plain"
FILE, PIPE = "File", "Pipe"


@dataclass(frozen=True)
class MultiInstanceMode:
    """Several instances only in one mode, on one processor: BlazingText's batch_skipgram on CPU."""

    hyperparameter: str
    value: str
    processor: str


@dataclass(frozen=True)
class Algorithm:
    """One built-in algorithm's documented training interface."""

    name: str  # the SDK's image catalog name, as `image_uris.retrieve` takes it
    title: str
    page: str  # its page in the guide (GUIDE + page)
    channels: tuple[str, ...]  # every channel it reads (COMMON); the first ones up to `required` must be present
    required: int  # how many of `channels`, from the first, it needs
    input_modes: tuple[str, ...]  # COMMON: File, or File and Pipe (FastFile is listed for none)
    multi_instance: bool | MultiInstanceMode  # COMMON's "Parallelizable"
    processors: tuple[str, ...]  # COMMON's "Instance class": ("gpu",), ("cpu",) or both
    content_types: Mapping[str, tuple[str, ...]] | None = None  # per channel ("*": every other one); None: unchecked
    file_mode_only: tuple[str, ...] = ()  # content types it reads in File mode only (CSV for k-means and LDA)
    only_distribution: Mapping[str, str] = field(default_factory=dict)  # channel -> the one S3DataDistributionType
    recommended_distribution: Mapping[str, str] = field(default_factory=dict)  # channel -> the one the page asks for
    one_gpu_per_instance: bool = False  # uses one GPU of each instance: a multi-GPU type wastes the rest
    gpu_unused: bool = False  # runs on GPU types without using the GPU
    deprecated_versions: tuple[str, ...] = ()  # catalog versions the guide says not to use

    @property
    def source(self) -> str:
        return GUIDE + self.page

    @property
    def required_channels(self) -> tuple[str, ...]:
        return self.channels[:self.required]

    def content_types_of(self, channel: str) -> tuple[str, ...] | None:
        if self.content_types is None:
            return None
        return self.content_types.get(channel, self.content_types.get("*"))


_TABULAR = {"*": (CSV, PROTOBUF)}

ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in (
    # blazingtext.html: "not parallelizable"; "For batch_skipgram mode, BlazingText supports single or multiple CPU
    # instances"; "For Word2Vec training, upload the file under the train channel"; supervised mode adds validation.
    Algorithm("blazingtext", "BlazingText", "blazingtext.html", ("train", "validation"), 1, (FILE, PIPE),
              MultiInstanceMode("mode", "batch_skipgram", "cpu"), ("cpu", "gpu")),
    # deepar.html: "The train channel ... is required. The test channel is optional"; "both GPU and CPU instances, in
    # both single and multi-machine settings"; COMMON: File.
    Algorithm("forecasting-deepar", "DeepAR forecasting", "deepar.html", ("train", "test"), 1, (FILE,), True,
              ("cpu", "gpu")),
    # fact-machines.html: "supports only the recordIO-protobuf format"; "can train across distributed instances";
    # a test channel beside train; GPUs "only on dense data".
    Algorithm("factorization-machines", "Factorization Machines", "fact-machines.html", ("train", "test"), 1,
              (FILE, PIPE), True, ("cpu", "gpu"), content_types={"*": (PROTOBUF,)}),
    # image-classification.html and COMMON: train and validation, optionally train_lst, validation_lst and model
    # (incremental training); GPU instances; parallelizable.
    Algorithm("image-classification", "Image classification (MXNet)", "image-classification.html",
              ("train", "validation", "train_lst", "validation_lst", "model"), 2, (FILE, PIPE), True, ("gpu",)),
    # ip-insights.html: train and validation; "content types need to be in text/csv format"; "supports only File
    # mode"; GPU and CPU, "distributed CPU instances" for large datasets.
    Algorithm("ipinsights", "IP Insights", "ip-insights.html", ("train", "validation"), 1, (FILE,), True,
              ("cpu", "gpu"), content_types={"*": (CSV,)}),
    # k-means.html: train (ShardedByS3Key recommended) and an optional test channel; recordIO-protobuf in File or
    # Pipe mode, CSV "only in File mode"; "only one GPU per instance is used". COMMON marks k-means not parallelizable
    # while its page recommends sharding the train channel across instances and the SDK's KMeans notebooks train on
    # two: not refused.
    Algorithm("kmeans", "k-means", "k-means.html", ("train", "test"), 1, (FILE, PIPE), True, ("cpu", "gpu"),
              content_types=_TABULAR, file_mode_only=(CSV,), one_gpu_per_instance=True),
    # k-nearest-neighbors.html: train and test; text/csv and application/x-recordio-protobuf in File or Pipe mode;
    # COMMON: "single GPU device on one or more instances", parallelizable.
    Algorithm("knn", "k-nearest neighbors (k-NN)", "k-nearest-neighbors.html", ("train", "test"), 1, (FILE, PIPE),
              True, ("cpu", "gpu"), content_types=_TABULAR, one_gpu_per_instance=True),
    # lda.html: train and optional test; recordIO-protobuf or CSV, CSV "only in File mode"; "LDA currently only
    # supports single-instance CPU training".
    Algorithm("lda", "Latent Dirichlet Allocation (LDA)", "lda.html", ("train", "test"), 1, (FILE, PIPE), False,
              ("cpu",), content_types=_TABULAR, file_mode_only=(CSV,)),
    # linear-learner.html: train, validation (optional: "the S3DataDistributionType should be FullyReplicated") and
    # test; recordIO-protobuf or CSV in File or Pipe mode; CPU and GPU; parallelizable (COMMON).
    Algorithm("linear-learner", "Linear Learner", "linear-learner.html", ("train", "validation", "test"), 1,
              (FILE, PIPE), True, ("cpu", "gpu"), content_types=_TABULAR,
              recommended_distribution={"validation": "FullyReplicated"}),
    # ntm.html: train, validation, test and auxiliary (optional ones FullyReplicated); CSV or recordIO-protobuf for the
    # data channels, text/plain for the auxiliary vocabulary; GPU and CPU; parallelizable (COMMON).
    Algorithm("ntm", "Neural Topic Model (NTM)", "ntm.html", ("train", "validation", "test", "auxiliary"), 1,
              (FILE, PIPE), True, ("cpu", "gpu"), content_types={"auxiliary": (TEXT,), "*": (CSV, PROTOBUF)},
              recommended_distribution={c: "FullyReplicated" for c in ("validation", "test", "auxiliary")}),
    # object2vec.html: "Currently, the Object2Vec algorithm can train only on a single machine"; COMMON: train,
    # validation, test; File; GPU or CPU.
    Algorithm("object2vec", "Object2Vec", "object2vec.html", ("train", "validation", "test"), 1, (FILE,), False,
              ("cpu", "gpu")),
    # object-detection.html and COMMON: train and validation, optionally train_annotation, validation_annotation and
    # model; File or Pipe; GPU; parallelizable.
    Algorithm("object-detection", "Object detection (MXNet)", "object-detection.html",
              ("train", "validation", "train_annotation", "validation_annotation", "model"), 2, (FILE, PIPE), True,
              ("gpu",)),
    # pca.html: train and optional test; recordIO-protobuf or CSV in File or Pipe mode; GPU and CPU; parallelizable.
    Algorithm("pca", "Principal Component Analysis (PCA)", "pca.html", ("train", "test"), 1, (FILE, PIPE), True,
              ("cpu", "gpu"), content_types=_TABULAR),
    # randomcutforest.html: train and test; recordIO-protobuf or CSV in File or Pipe mode; "the train channel only
    # supports S3DataDistributionType=ShardedByS3Key and the test channel only supports ... FullyReplicated"; on GPU
    # types "it does not take advantage of GPU hardware".
    Algorithm("randomcutforest", "Random Cut Forest (RCF)", "randomcutforest.html", ("train", "test"), 1,
              (FILE, PIPE), True, ("cpu", "gpu"), content_types=_TABULAR,
              only_distribution={"train": "ShardedByS3Key", "test": "FullyReplicated"}, gpu_unused=True),
    # semantic-segmentation.html: train and validation (with train_annotation and validation_annotation, or an
    # augmented manifest in Pipe mode), optionally label_map and model; "only supports GPU instances for training ...
    # in single machine configurations".
    Algorithm("semantic-segmentation", "Semantic segmentation", "semantic-segmentation.html",
              ("train", "validation", "train_annotation", "validation_annotation", "label_map", "model"), 2,
              (FILE, PIPE), False, ("gpu",)),
    # seq-2-seq.html: "The algorithm expects three channels: train, validation, vocab"; "only supports GPU instance
    # types and can only train on a single machine"; COMMON: File.
    Algorithm("seq2seq", "Sequence-to-Sequence", "seq-2-seq.html", ("train", "validation", "vocab"), 3, (FILE,),
              False, ("gpu",)),
    # xgboost.html and COMMON: train and optional validation; File or Pipe; parallelizable; GPUs from 1.2-1 on (the
    # SDK's catalog offers only CPU images before). xgboost-72.html: "the image URI ending with :1 refers to the old
    # version" (0.72, deprecated); COMMON: "For XGBoost, do not use :latest or :1".
    Algorithm("xgboost", "XGBoost", "xgboost.html", ("train", "validation"), 1, (FILE, PIPE), True, ("cpu", "gpu"),
              deprecated_versions=("1", "latest")),
)}

XGBOOST_DEPRECATED_SOURCE = GUIDE + "xgboost-72.html"


def names() -> tuple[str, ...]:
    return tuple(sorted(ALGORITHMS))
