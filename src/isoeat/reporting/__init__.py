"""Reporting: tables (text, CSV, JSON). Reads results only."""

from .tables import comparison_table, format_d, format_p, records_to_csv, to_json, weat_table, write_outputs

__all__ = ["comparison_table", "format_d", "format_p", "records_to_csv", "to_json", "weat_table", "write_outputs"]
