-- The search area's tunables, read by memory_private.setting(): how many messages lexical search
-- scores per query, which bounds its cost on a long history, and what a step of a filtered HNSW
-- scan costs against an exact distance, which decides between the index and an exact scan
-- (vector_messages).
insert into memory_private.settings (key, value, description) values
(
    'lexical_candidates', '500',
    'Most messages lexical search scores per query: the newest holding the query''s rarest terms, added '
    'while their document frequencies sum to at most this. More finds messages sharing only common words '
    'with the query on a long history, at a few microseconds each.'
),
(
    'hnsw_visit_cost', '10',
    'What one row a filtered HNSW scan visits costs, in exact distances: search by meaning uses the index '
    'for a user when p_limit * all vectors / the user''s vectors visits cost less than the user''s vectors.'
);
