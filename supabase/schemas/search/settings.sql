-- The search area's tunables, read by memory_private.setting(): how many messages lexical search
-- scores per query, which bounds its cost on a long history.
insert into memory_private.settings (key, value, description) values
(
    'lexical_candidates', '500',
    'Most messages lexical search scores per query: the newest holding the query''s rarest terms, added '
    'while their document frequencies sum to at most this. More finds messages sharing only common words '
    'with the query on a long history, at a few microseconds each.'
);
