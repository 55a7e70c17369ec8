-- The embeddings area's tunables, read by memory_private.setting(): the current model and its
-- dimensions (changed together by memory.set_embedding_model), the rows an embed job sends at once,
-- how much of the preceding message a message is embedded with, the characters of a text it sends
-- at most, and the similarity a memory needs to match a search by meaning alone. Builds the model's
-- index.
insert into memory_private.settings (key, value, description) values
(
    'embedding_model', '"offline-hash-384"',
    'The embedding model whose vectors search compares (memory.set_embedding_model changes it).'
),
('embedding_dimensions', '384', 'Dimensions of the embedding model''s vectors.'),
('embedding_batch', '64', 'Rows one embed job sends to the embeddings server.'),
(
    'embedding_context_chars', '400',
    'Characters from the end of the preceding message embedded with a message (0: the message alone); '
    'rows embedded before a change keep their vectors.'
),
(
    'embedding_max_chars', '8000',
    'Characters of a row''s text an embed job sends at most (the beginning): about 2,000 tokens of English, '
    'within OpenAI''s 8,192; lower it for a model of shorter input whose server refuses longer texts.'
),
(
    'memory_search_min_similarity', '0.5',
    'Cosine similarity a memory needs to match a search by meaning alone (search_memories).'
);

select memory_private.ensure_embedding_indexes('offline-hash-384', 384);
