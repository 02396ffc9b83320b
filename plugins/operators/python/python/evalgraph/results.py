"""Reading a results folder (what `evalgraph run` wrote) from a plain python3: evalgraph.read_run(path)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Union

if TYPE_CHECKING:  # pandas is imported only by to_pandas
    import pandas

__all__ = ["Run", "read_run"]


class Run:
    """One results folder.

    records: the detailed records (one dict per dataset record and replication, as the sink.jsonl sink wrote
             them: the dataset's fields, each node's output under its id, `_errors` / `_skipped` where a node
             failed or was skipped).
    info:    run.json as a dict (the engine's version, the nodes with their parameters and counts, LLM usage,
             a python node's script path, SHA-256 and signature under nodes.<id>.described).
    path:    the folder.
    records_file: the file the records came from."""

    path: str
    info: Dict[str, Any]
    records: List[Dict[str, Any]]
    records_file: str

    def __init__(self, path: str, info: Dict[str, Any], records: List[Dict[str, Any]], records_file: str) -> None:
        self.path = path
        self.info = info
        self.records = records
        self.records_file = records_file

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        return f"<evalgraph.Run {self.info.get('pipeline', '?')!r}: {len(self.records)} records from {self.path}>"

    def to_pandas(self, sep: str = ".") -> "pandas.DataFrame":
        """The records as a pandas DataFrame, nested fields flattened to columns ("s0.score", "_errors.j").
        Imports pandas only now; raises ImportError saying what to install when it is missing."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Run.to_pandas() needs pandas (Debian: apt install python3-pandas; "
                              "or pip install pandas)") from e
        return pandas.json_normalize(self.records, sep=sep)


def read_run(path: Union[str, "os.PathLike[str]"]) -> Run:
    """Reads a results folder: its run.json and the records its sink.jsonl wrote.

    path: the run's folder (the path `evalgraph run` prints), or its run.json.
    Raises FileNotFoundError (no such folder, or no run.json in it: the run did not finish — finish it with
    `evalgraph run --resume <folder>`), ValueError (run.json or a record line is not JSON; the pipeline had no
    sink.jsonl, so the folder holds no detailed records)."""
    path = os.fspath(path)
    if os.path.basename(path) == "run.json":
        path = os.path.dirname(path) or "."
    info_file = os.path.join(path, "run.json")
    if not os.path.isdir(path):
        raise FileNotFoundError(f"evalgraph.read_run: no such results folder: {path}")
    if not os.path.isfile(info_file):
        raise FileNotFoundError(f"evalgraph.read_run: {path} has no run.json: the run did not finish "
                                f"(finish it with `evalgraph run --resume {path}`), or this is not a run's folder")
    with open(info_file, encoding="utf-8") as f:
        try:
            info = json.load(f)
        except ValueError as e:
            raise ValueError(f"evalgraph.read_run: {info_file} is not JSON: {e}") from None
    # run.json names the records file (records_file: the engine decides it once, for compare, agree and this);
    # a run written before it had that key: the files sink.jsonl wrote.
    files = [info["records_file"]] if isinstance(info.get("records_file"), str) else []
    for sink in (info.get("sinks") or {}).values():
        if not files and sink.get("uses") == "sink.jsonl":
            files += (sink.get("result") or {}).get("files") or []
    if not files:
        raise ValueError(f"evalgraph.read_run: the run in {path} wrote no detailed records: its pipeline has no "
                         "sink.jsonl (add `- uses: sink.jsonl` under sinks:)")
    records_file = os.path.join(path, files[0])
    records = []
    with open(records_file, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except ValueError as e:
                raise ValueError(f"evalgraph.read_run: {records_file}:{n} is not JSON: {e}") from None
    return Run(path, info, records, records_file)
