"""Result records: the typed record of one graded submission (``record``), what in it needs a person
(``finding``), its file on disk (``files``) and the JSON it is written as (``layout``). The names below are this package's API;
``OutputError`` and the atomic writes are ``durable``'s, named here too for the outputs that write records.
"""
from ..durable import OutputError, atomic_write, replace_atomically, sync_file_systems, synced_at_end
from .finding import Finding
from .files import check_record_names, file_name, graded_but_gone, load_record, name_digest, read_record, record_path, write_record
from .layout import dumps, laid_out
from .record import INTERNAL, CellScore, CheckResult, Record, Score, check_result, earned, not_graded, points

__all__ = ["INTERNAL", "CellScore", "CheckResult", "Finding", "OutputError", "Record", "Score", "atomic_write",
           "check_record_names", "check_result", "dumps", "earned", "file_name", "graded_but_gone", "laid_out", "load_record",
           "name_digest", "not_graded", "points", "read_record", "record_path", "replace_atomically", "sync_file_systems",
           "synced_at_end", "write_record"]
