"""The evaluation harness: benchmark readers, per-answer scores, and reports."""
from ._datasets import DATASETS, Dataset, QAItem, metaqa_question, pathquestion_line, read_dataset, select_items, \
    wc2014_line
from ._gold import gold_from_sparql, gold_notes, label_gold, run_gold_query
from ._harness import EvalRun, edge_hits, query_iris, rescore, run_eval, score_answer, unscorable_record
from ._failures import FAILURE_KINDS, failure_counts, failure_kind
from ._metrics import by_shape, f1, hits_at_1, percentile, summarise
from ._question_files import FORMATS, detect_format, read_questions_file
from ._shapes import SHAPES, item_shape, query_shape, read_query
from ._typed import TypedValue, gold_values, literal_value, matches, predicted_values, sparql_json_values, \
    typed_f1, typed_hits_at_1
from ._report import format_cell, markdown_report, plot_report, shape_table, summary_rows, write_report, \
    TABLE_COLUMNS
from ._results_log import ResultsLog, read_results
from ._sweep import Sweep, parse_sweep, plot_sweep, sweep_row, write_sweep
from ._unanswerable import spliced_name, unanswerable_items

__all__ = [
    "DATASETS", "Dataset", "QAItem", "read_dataset", "select_items",
    "metaqa_question", "pathquestion_line", "wc2014_line",
    "EvalRun", "run_eval", "score_answer", "rescore", "unscorable_record", "edge_hits", "query_iris",
    "f1", "hits_at_1", "percentile", "summarise", "by_shape", "FAILURE_KINDS", "failure_kind", "failure_counts",
    "FORMATS", "detect_format", "read_questions_file",
    "SHAPES", "item_shape", "query_shape", "read_query",
    "TypedValue", "gold_values", "literal_value", "matches", "predicted_values", "sparql_json_values",
    "typed_f1", "typed_hits_at_1",
    "gold_from_sparql", "gold_notes", "label_gold", "run_gold_query",
    "ResultsLog", "read_results",
    "markdown_report", "plot_report", "summary_rows", "write_report", "shape_table", "format_cell", "TABLE_COLUMNS",
    "Sweep", "parse_sweep", "plot_sweep", "sweep_row", "write_sweep", "unanswerable_items", "spliced_name",
]
