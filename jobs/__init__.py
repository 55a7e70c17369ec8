"""supamem jobs: claim work from the database, call the LLM, write results back via RPC."""
