"""The evaluation harness: benchmark readers, per-answer scores, and reports."""
from ._datasets import DATASETS, Dataset, QAItem, metaqa_question, pathquestion_line, read_dataset, select_items, \
    wc2014_line
from ._harness import EvalRun, edge_hits, query_iris, run_eval, score_answer
from ._metrics import f1, hits_at_1, percentile, summarise
from ._report import markdown_report, plot_report, summary_rows, write_report
from ._sweep import Sweep, parse_sweep, plot_sweep, sweep_row, write_sweep
from ._unanswerable import spliced_name, unanswerable_items

__all__ = [
    "DATASETS", "Dataset", "QAItem", "read_dataset", "select_items",
    "metaqa_question", "pathquestion_line", "wc2014_line",
    "EvalRun", "run_eval", "score_answer", "edge_hits", "query_iris",
    "f1", "hits_at_1", "percentile", "summarise",
    "markdown_report", "plot_report", "summary_rows", "write_report",
    "Sweep", "parse_sweep", "plot_sweep", "sweep_row", "write_sweep", "unanswerable_items", "spliced_name",
]
