"""supamem jobs: claim work from the database, call the LLM, write results back via RPC.

The LLM side, in four modules:

- `jobs.llm`: `LLMClient.complete(messages, output, name=...)`, structured output over any
  OpenAI-compatible chat-completions endpoint, typed errors (`LLMError` and subclasses),
  retries with backoff and Retry-After, one corrective retry for bad answers, token usage.
  Configured by `LLMSettings.from_env()` (SUPAMEM_LLM_*; the default provider is `offline`).
- `jobs.offline`: the offline provider, deterministic and rule-based, so everything runs
  without a network or a key; every text it writes says it is rule-based.
- `jobs.schemas`: the pydantic output model of each job kind, and the strict JSON Schema sent.
- `jobs.prompts`: the chat messages of each job kind, built from `memory.job_input`'s JSON:

      prompt = build_prompt(job_input)
      result = client.complete(prompt.messages, prompt.output, name=prompt.name, check=prompt.check)
      # result.value -> memory.finish_<kind>(...), result.usage.model_dump() -> p_usage
"""
