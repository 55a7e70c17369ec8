-- The search area's tunables, read by memory_private.setting(): how many messages lexical search
-- scores per query, which bounds its cost on a long history, what a step of a filtered HNSW scan
-- costs against an exact distance, which decides between the index and an exact scan
-- (vector_messages), and when a user's vectors get lists of their own and how many a search reads.
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
),
(
    'vector_lists_from', '2000',
    'Messages from which a user''s vectors get lists of their own (an inverted file, built every minute by '
    'memory_private.run_vector_list_builds and again when the messages double): search by meaning then reads '
    'the nearest lists instead of every vector of the user.'
),
(
    'vector_list_probes', '8',
    'Lists of a user''s vectors that search by meaning reads (the nearest centres): more finds more of the '
    'exact nearest, at about sqrt(the user''s vectors) distances a list.'
);
