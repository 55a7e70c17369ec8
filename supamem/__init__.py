"""supamem: long-term conversation memory for LLM chat apps, on Supabase."""

__version__ = "0.1.0"
