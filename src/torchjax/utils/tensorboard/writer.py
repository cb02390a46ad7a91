"""SummaryWriter: PyTorch's TensorBoard writer, on the tensorboard package's event files."""

from __future__ import annotations

import datetime
import os
import socket
import time

import numpy as np
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2
from tensorboard.compat.proto.types_pb2 import DT_STRING
from tensorboard.summary.writer.event_file_writer import EventFileWriter

__all__ = ["SummaryWriter"]


def _numpy(values) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach()
    if hasattr(values, "numpy"):
        values = values.numpy()
    return np.asarray(values)


class SummaryWriter:
    """Writes scalars, histograms and text for TensorBoard to `log_dir` (default
    runs/<date>_<host><comment>)."""

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step=None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""):
        if not log_dir:
            stamp = datetime.datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self._options = dict(max_queue_size=max_queue, flush_secs=flush_secs,
                             filename_suffix=filename_suffix)
        self._writers: dict = {}
        self.file_writer = self._writer(self.log_dir)

    def _writer(self, log_dir: str) -> EventFileWriter:
        if log_dir not in self._writers:
            self._writers[log_dir] = EventFileWriter(log_dir, **self._options)
        return self._writers[log_dir]

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, value: summary_pb2.Summary.Value, global_step, walltime,
             log_dir: str | None = None) -> None:
        event = event_pb2.Event(wall_time=time.time() if walltime is None else walltime,
                                step=0 if global_step is None else int(global_step),
                                summary=summary_pb2.Summary(value=[value]))
        self._writer(log_dir or self.log_dir).add_event(event)

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        value = float(_numpy(scalar_value).reshape(()))
        self._add(summary_pb2.Summary.Value(tag=tag, simple_value=value), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None,
                    walltime=None) -> None:
        """Each scalar goes to its own run, <log_dir>/<main_tag>_<tag>, under main_tag."""
        for tag, scalar in tag_scalar_dict.items():
            run = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            value = float(_numpy(scalar).reshape(()))
            self._add(summary_pb2.Summary.Value(tag=main_tag, simple_value=value),
                      global_step, walltime, log_dir=run)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow",
                      walltime=None, max_bins=None) -> None:
        data = _numpy(values).astype(np.float64).reshape(-1)
        if data.size == 0:
            raise ValueError("add_histogram: the values are empty")
        if isinstance(bins, str) and bins == "tensorflow":
            bins = "auto"  # numpy's bin-width rule stands in for TensorFlow's bucket layout
        counts, edges = np.histogram(data, bins=bins)
        if max_bins is not None and len(counts) > max_bins:
            counts, edges = np.histogram(data, bins=max_bins)
        histo = summary_pb2.HistogramProto(
            min=float(data.min()), max=float(data.max()), num=int(data.size),
            sum=float(data.sum()), sum_squares=float((data * data).sum()),
            bucket_limit=edges[1:].tolist(), bucket=counts.astype(np.float64).tolist())
        self._add(summary_pb2.Summary.Value(tag=tag, histo=histo), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        metadata = summary_pb2.SummaryMetadata(
            plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        tensor = tensor_pb2.TensorProto(
            dtype=DT_STRING, string_val=[str(text_string).encode("utf-8")],
            tensor_shape=tensor_shape_pb2.TensorShapeProto(
                dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)]))
        self._add(summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor),
                  global_step, walltime)

    def flush(self) -> None:
        for w in self._writers.values():
            w.flush()

    def close(self) -> None:
        for w in self._writers.values():
            w.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


def _unsupported(name: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"torch.utils.tensorboard.SummaryWriter.{name} is not supported by torchjax yet: "
            f"it writes scalars (add_scalar, add_scalars), histograms and text")
    method.__name__ = name
    return method


for _name in ("add_image", "add_images", "add_image_with_boxes", "add_figure", "add_video",
              "add_audio", "add_graph", "add_embedding", "add_pr_curve", "add_pr_curve_raw",
              "add_mesh", "add_hparams", "add_custom_scalars", "add_onnx_graph",
              "add_histogram_raw", "add_tensor"):
    setattr(SummaryWriter, _name, _unsupported(_name))
del _name
